#pragma once
// A tiny character-level text project (Input -> Embedding -> Linear over a five-symbol
// vocabulary, cross-entropy) and a run checkpoint of it written as a run writes one (the
// project inside, then session::write_model_metadata): for the tests of `plexus-cli sample`
// and of Try It's prompt. Its text file is never written: the checkpoint alone must do.
// Then a sequence classifier of labelled texts and its data, written into a folder: for the
// tests of `plexus-cli predict --text` and of Try It's text field.
#include <filesystem>
#include <fstream>
#include <random>
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

// A run checkpoint of `g` with its freshly initialised weights (`vocabulary`: a labelled-texts
// model's input characters).
inline void write_run_checkpoint(const std::filesystem::path& file, const graph::Graph& g, const graph::DatasetInfo& info,
                                 const std::vector<std::string>& class_names,
                                 const std::vector<std::string>& vocabulary = {}) {
  const layers::CompiledGraph c = layers::compile(g, info, g.training.seed);
  train::Metadata meta{{"project", graph::serialize_project(g)}};
  // Ids and raw pixels: no standardisation, as a text run.
  session::write_model_metadata(meta, info, {}, class_names, {}, vocabulary);
  train::save_checkpoint(file, *c.model, nullptr, meta);
}

inline void write_text_checkpoint(const std::filesystem::path& file) {
  write_run_checkpoint(file, graph::parse_project(text_project_json(), "names.plexus"),
                       {{kTextSeqLen}, {kTextSeqLen}, int64_t(kTextSymbols.size())}, kTextSymbols);
}

// Labelled texts in `dir`: long.txt, words of the letters a-e, and short.txt, of f-j, 2 to 7
// letters, `per_class` of each, some capitalised (the project lowercases them). Learnable from
// the letters alone; the vocabulary is a-j.
inline void write_text_classes(const std::filesystem::path& dir, int per_class) {
  std::filesystem::create_directories(dir);
  std::mt19937 gen(7);
  for (const auto& [name, first] : {std::pair{"long", 'a'}, std::pair{"short", 'f'}}) {
    std::ofstream f(dir / (std::string(name) + ".txt"));
    for (int i = 0; i < per_class; ++i) {
      std::string word;
      for (unsigned k = 0, n = 2 + gen() % 6; k < n; ++k) word += char(first + int(gen() % 5));
      if (i % 3 == 0) word[0] = char(word[0] - 'a' + 'A');
      f << word << '\n';
    }
  }
}

// Ids [T] -> Embedding (the 10 letters and padding) -> GRU -> the mean over time -> Linear ->
// CrossEntropy, on the labelled texts at `path` (relative to the project), lowercased.
inline std::string text_classes_project_json(const std::string& path, int epochs) {
  return R"({"format": 1, "nodes": [
      {"id": "in", "type": "Input", "name": "in", "params": {}, "position": [0, 0]},
      {"id": "emb", "type": "Embedding", "name": "emb", "params": {"num_embeddings": 11, "embedding_dim": 8}, "position": [200, 0]},
      {"id": "gru", "type": "GRU", "name": "gru", "params": {"hidden_size": 16}, "position": [400, 0]},
      {"id": "pool", "type": "Mean", "name": "pool", "params": {"dim": [1]}, "position": [600, 0]},
      {"id": "fc", "type": "Linear", "name": "fc", "params": {"out_features": 2}, "position": [800, 0]},
      {"id": "loss", "type": "CrossEntropy", "name": "loss", "params": {}, "position": [1000, 0]}],
    "edges": [
      {"from": ["in", "x"], "to": ["emb", "input"]}, {"from": ["emb", "output"], "to": ["gru", "input"]},
      {"from": ["gru", "output"], "to": ["pool", "input"]}, {"from": ["pool", "output"], "to": ["fc", "input"]},
      {"from": ["fc", "output"], "to": ["loss", "input"]}, {"from": ["in", "y"], "to": ["loss", "target"]}],
    "dataset": {"kind": "text_classes", "path": ")" + path + R"(", "lowercase": true},
    "training": {"optimizer": "adam", "lr": 0.02, "batch_size": 16, "epochs": )" + std::to_string(epochs) +
         R"(, "validation_fraction": 0.2, "seed": 3}})";
}

}  // namespace plexus::testing
