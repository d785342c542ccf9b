#pragma once
// C++ code export of a trained model (`plexus-cli export FILE --checkpoint C --cpp OUT.cpp`,
// File > Export > C++ code): one program against the Plexus core (core/plexus.h), built with
// the core's installed CMake package (`cmake --install build --component plexus_dev`;
// find_package(Plexus), target Plexus::core; docs/using-models.md):
//   - kInputShape and kStandardise: the run's input standardisation (session::InputNormalization);
//   - struct <Project> : nn::Module: each node with weights or a module of its own a member,
//     the core's nn:: layer registered under the node's id (so a checkpoint's tensors load by
//     name); predict(raw) takes raw inputs [N, kInputShape...], standardises them and computes
//     every node the loss nodes' predictions need in topological order, each by its layer
//     type's C++ rule (layers/code_rules.h), and returns one prediction per loss node in graph
//     order; forward(raw) is the first;
//   - main: `PROGRAM WEIGHTS` prints the output for a batch of zeros; `PROGRAM WEIGHTS IN OUT`
//     reads tensor "x" (raw inputs) from the safetensors file IN and writes "output.0", ... to OUT.
// A node without a rule, or one its rule cannot express, throws ValueError naming the node and
// why; nothing is written then.
#include <filesystem>
#include <string>

#include "export/pytorch_code.h"  // CodeOptions, CodeSummary
#include "session/trained_model.h"

namespace plexus::exporter {

// The file's text.
std::string cpp_code(const session::TrainedModel& model, const CodeOptions& options = {},
                     CodeSummary* summary = nullptr);

// cpp_code written atomically to `out` (an existing file stays as it was on failure).
CodeSummary export_cpp(const session::TrainedModel& model, const std::filesystem::path& out,
                       const CodeOptions& options = {});

}  // namespace plexus::exporter
