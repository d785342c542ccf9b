#pragma once
// The out-of-memory tests' project: points of four features in three classes (a CSV file) through
// a Linear layer 'wide' far wider than its input, then a Linear of 3 and CrossEntropy. Its first
// layer's output, [batch, width] float32, is by far the largest tensor a step asks for, while its
// weights stay small: a memory limit or the allocator's test hook between the two makes a step run
// out of memory in that layer's forward pass, at a known size.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace plexus::testing {

// Writes points.csv (`rows` points) and wide.plexus into `dir`; returns the project's path.
inline std::filesystem::path write_wide_project(const std::filesystem::path& dir, int64_t width, int64_t batch,
                                                int rows) {
  std::ofstream csv(dir / "points.csv");
  csv << "a,b,c,d,kind\n";
  const char* kinds[] = {"red", "green", "blue"};
  for (int i = 0; i < rows; ++i)
    csv << i % 3 << ',' << (i % 5) * 0.2 << ',' << (i % 7) * 0.1 << ',' << (i % 11) * 0.3 << ',' << kinds[i % 3]
        << '\n';
  const std::filesystem::path project = dir / "wide.plexus";
  std::ofstream(project) << R"({
  "format": 1,
  "nodes": [
    {"id": "in", "type": "Input", "name": "in", "params": {}, "position": [0, 0]},
    {"id": "fc1", "type": "Linear", "name": "wide", "params": {"out_features": )"
                         << width << R"(}, "position": [200, 0]},
    {"id": "fc2", "type": "Linear", "name": "out", "params": {"out_features": 3}, "position": [400, 0]},
    {"id": "loss", "type": "CrossEntropy", "name": "loss", "params": {}, "position": [600, 0]}
  ],
  "edges": [
    {"from": ["in", "x"], "to": ["fc1", "input"]},
    {"from": ["fc1", "output"], "to": ["fc2", "input"]},
    {"from": ["fc2", "output"], "to": ["loss", "input"]},
    {"from": ["in", "y"], "to": ["loss", "target"]}
  ],
  "dataset": {"kind": "csv", "path": "points.csv", "target": "kind", "task": "classification"},
  "training": {"epochs": 1, "batch_size": )"
                         << batch << R"(, "optimizer": "sgd", "lr": 0.01}
})";
  return project;
}

}  // namespace plexus::testing
