#pragma once
// A tiny character-level text project (Input -> Embedding -> Linear over a five-symbol
// vocabulary, cross-entropy) and a run checkpoint of it written as a run writes one (the
// project inside, then session::write_model_metadata): for the tests of `plexus-cli sample`
// and of Try It's prompt. Its text file is never written: the checkpoint alone must do.
#include <filesystem>
#include <string>
#include <vector>

#include "graph/project.h"
#include "layers/compiler.h"
#include "session/trained_model.h"
#include "train/checkpoint.h"

namespace plexus::testing {

inline const std::vector<std::string> kTextSymbols{"\n", "a", "e", "n", "\xC3\xA9"};  // the last: é
inline constexpr int64_t kTextSeqLen = 8;

inline std::string text_project_json() {
  return R"({"format": 1, "nodes": [
      {"id": "in", "type": "Input", "name": "in", "params": {}, "position": [0, 0]},
      {"id": "embed", "type": "Embedding", "name": "embed", "params": {"num_embeddings": 5, "embedding_dim": 8}, "position": [200, 0]},
      {"id": "out", "type": "Linear", "name": "out", "params": {"out_features": 5}, "position": [400, 0]},
      {"id": "loss", "type": "CrossEntropy", "name": "loss", "params": {}, "position": [600, 0]}],
    "edges": [{"from": ["in", "x"], "to": ["embed", "input"]}, {"from": ["embed", "output"], "to": ["out", "input"]},
              {"from": ["out", "output"], "to": ["loss", "input"]}, {"from": ["in", "y"], "to": ["loss", "target"]}],
    "dataset": {"kind": "text", "path": "names.txt", "seq_len": 8},
    "training": {"epochs": 1, "seed": 3}})";
}

// A run checkpoint of `g` with its freshly initialised weights.
inline void write_run_checkpoint(const std::filesystem::path& file, const graph::Graph& g, const graph::DatasetInfo& info,
                                 const std::vector<std::string>& class_names) {
  const layers::CompiledGraph c = layers::compile(g, info, g.training.seed);
  train::Metadata meta{{"project", graph::serialize_project(g)}};
  session::write_model_metadata(meta, info, {}, class_names);  // ids: no standardisation, as a text run
  train::save_checkpoint(file, *c.model, nullptr, meta);
}

inline void write_text_checkpoint(const std::filesystem::path& file) {
  write_run_checkpoint(file, graph::parse_project(text_project_json(), "names.plexus"),
                       {{kTextSeqLen}, {kTextSeqLen}, int64_t(kTextSymbols.size())}, kTextSymbols);
}

}  // namespace plexus::testing
