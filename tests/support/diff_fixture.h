#pragma once
// Two known projects, run A's and run B's, for the tests of graph::diff and of what shows it (the
// run comparison, plexus-cli diff); each test lists their differences by hand.
#include <string>

#include "graph/graph.h"
#include "graph/project.h"

namespace plexus::testing {

// Run A: an MLP with dropout.
inline const char* kDiffBefore = R"({
  "format": 1,
  "nodes": [
    {"id": "in", "type": "Input", "name": "in", "params": {}, "position": [0, 0]},
    {"id": "flat", "type": "Flatten", "name": "flat", "params": {}, "position": [280, 0]},
    {"id": "fc1", "type": "Linear", "name": "fc1", "params": {"out_features": 128}, "position": [560, 0]},
    {"id": "act", "type": "ReLU", "name": "act", "params": {}, "position": [0, 220]},
    {"id": "drop", "type": "Dropout", "name": "drop", "params": {}, "position": [280, 220]},
    {"id": "fc2", "type": "Linear", "name": "fc2", "params": {"out_features": 10}, "position": [560, 220]},
    {"id": "loss", "type": "CrossEntropy", "name": "loss", "params": {}, "position": [840, 220]}
  ],
  "edges": [
    {"from": ["in", "x"], "to": ["flat", "input"]},
    {"from": ["flat", "output"], "to": ["fc1", "input"]},
    {"from": ["fc1", "output"], "to": ["act", "input"]},
    {"from": ["act", "output"], "to": ["drop", "input"]},
    {"from": ["drop", "output"], "to": ["fc2", "input"]},
    {"from": ["fc2", "output"], "to": ["loss", "input"]},
    {"from": ["in", "y"], "to": ["loss", "target"]}
  ],
  "dataset": {"kind": "mnist", "path": "data/mnist"},
  "training": {"optimizer": "sgd", "lr": 0.1, "epochs": 5}
})";

// Run B: fc1 narrower and renamed, the activation retyped, the dropout replaced by another
// node, moved nodes, defaults written out, another dataset folder, augmentation, Adam.
inline const char* kDiffAfter = R"({
  "format": 1,
  "nodes": [
    {"id": "in", "type": "Input", "name": "in", "params": {}, "position": [0, 0]},
    {"id": "flat", "type": "Flatten", "name": "flat", "params": {}, "position": [300, 40]},
    {"id": "fc1", "type": "Linear", "name": "hidden", "params": {"out_features": 64, "bias": true}, "position": [560, 0]},
    {"id": "act", "type": "LeakyReLU", "name": "act", "params": {}, "position": [0, 220]},
    {"id": "drop2", "type": "Dropout", "name": "drop2", "params": {"p": 0.2}, "position": [280, 260]},
    {"id": "fc2", "type": "Linear", "name": "fc2", "params": {"out_features": 10, "bias": true}, "position": [560, 220]},
    {"id": "loss", "type": "CrossEntropy", "name": "loss", "params": {}, "position": [840, 220]}
  ],
  "edges": [
    {"from": ["in", "x"], "to": ["flat", "input"]},
    {"from": ["flat", "output"], "to": ["fc1", "input"]},
    {"from": ["fc1", "output"], "to": ["act", "input"]},
    {"from": ["act", "output"], "to": ["drop2", "input"]},
    {"from": ["drop2", "output"], "to": ["fc2", "input"]},
    {"from": ["fc2", "output"], "to": ["loss", "input"]},
    {"from": ["in", "y"], "to": ["loss", "target"]}
  ],
  "dataset": {"kind": "mnist", "path": "data/mnist-copy", "height": 28, "augment": {"shift": 2}},
  "training": {"optimizer": "adam", "lr": 0.01, "epochs": 5, "seed": 1},
  "view": {"zoom": 2.0, "center": [10.0, 20.0]}
})";

inline graph::Graph diff_before() { return graph::parse_project(kDiffBefore, "run A"); }
inline graph::Graph diff_after() { return graph::parse_project(kDiffAfter, "run B"); }

}  // namespace plexus::testing
