#pragma once
// The explain suites' models: an example project's graph compiled with seeded weights as a
// session::TrainedModel with MNIST's normalisation, no file or dataset needed.
#include <filesystem>
#include <string>
#include <vector>

#include "graph/dataset_info.h"
#include "graph/project.h"
#include "session/trained_model.h"

namespace plexus::testing {

// A picture of uniform noise in [0, 1], MNIST's shape [1, 28, 28].
inline Tensor digit(uint64_t seed) {
  Generator gen(seed);
  return rand({1, 28, 28}, &gen);
}

inline session::TrainedModel example_model(const std::string& example, uint64_t seed = 1) {
  session::TrainedModel m;
  m.project = graph::load_project(std::filesystem::path(PLEXUS_SOURCE_DIR) / "examples" / (example + ".plexus"));
  m.info = graph::describe_dataset(m.project.dataset);
  m.compiled = layers::compile(m.project, m.info, seed);
  m.compiled.model->eval();
  m.normalization = {{0.1307f}, {0.3081f}};
  for (int64_t c = 0; c < m.info.classes; ++c) m.class_names.push_back(std::to_string(c));
  return m;
}

// A text example project (names_transformer: a text file, names_gender: labelled texts) with
// the shapes `info` its dataset would give and `symbols` for its vocabulary, no data read.
inline session::TrainedModel text_model(const std::string& example, const graph::DatasetInfo& info,
                                        const std::vector<std::string>& symbols, uint64_t seed = 1) {
  session::TrainedModel m;
  m.project = graph::load_project(std::filesystem::path(PLEXUS_SOURCE_DIR) / "examples" / (example + ".plexus"));
  m.info = info;
  m.compiled = layers::compile(m.project, m.info, seed);
  m.compiled.model->eval();
  if (m.project.dataset.kind == "text") {
    m.class_names = symbols;
  } else {
    m.vocabulary = symbols;
    for (int64_t c = 0; c < info.classes; ++c) m.class_names.push_back("class " + std::to_string(c));
  }
  return m;
}

// names_transformer's 54 symbols, names of up to 32 characters.
inline session::TrainedModel names_transformer(uint64_t seed = 1) {
  std::vector<std::string> symbols{"\n", "'", "-"};
  for (char c = 'a'; c <= 'z'; ++c) symbols.push_back(std::string(1, c));
  for (char c = 'A'; c <= 'Y'; ++c) symbols.push_back(std::string(1, c));
  return text_model("names_transformer", {.input_shape = {32}, .label_shape = {32}, .classes = 54}, symbols, seed);
}

// names_gender's 27 characters, names of up to 12, two classes.
inline session::TrainedModel names_gender(uint64_t seed = 1) {
  std::vector<std::string> symbols{"'"};
  for (char c = 'a'; c <= 'z'; ++c) symbols.push_back(std::string(1, c));
  return text_model("names_gender", {.input_shape = {12}, .label_shape = {}, .classes = 2}, symbols, seed);
}

}  // namespace plexus::testing
