#pragma once
// The model graph a person draws: typed nodes with parameters, edges between named ports,
// the dataset it trains on and the training settings. Plain data: the registry gives node
// types their meaning, the validator explains problems, the compiler builds a model.
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "optim_config/config.h"

namespace plexus::graph {

// A parameter's value: whole number, real number, flag, choice (text) or list of whole numbers.
// A list of names (std::vector<std::string>) is a Names parameter's: an Input's table columns.
using ParamValue =
    std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>, std::vector<std::string>>;
// "128", "0.5", "true", "same", "[1, 28, 28]", "[0.5, 2]", "[age, fare]"
std::string to_string(const ParamValue& v);

struct Position {
  double x = 0, y = 0;
  bool operator==(const Position&) const = default;
};

struct Node {
  std::string id;    // stable, unique: letters, digits, '_' and '-'; names parameters "<id>.<param>"
  std::string type;  // a registry type name, e.g. "Linear"
  std::string name;  // what the user calls it ("fc1"); may repeat, may be empty
  std::map<std::string, ParamValue> params;  // absent = the type's default
  Position position;
  // How training treats the parameters the node learns (graph/node_settings.h). Frozen: they
  // get no gradient and no optimizer state, and the node runs as in evaluation (BatchNorm
  // normalises with its running statistics and keeps them). Else the optimizer's learning rate
  // and weight decay times these (an lr_mult of 0 leaves the weights too, with optimizer state).
  bool frozen = false;
  double lr_mult = 1;
  double weight_decay_mult = 1;
  bool operator==(const Node&) const = default;
  std::string label() const;  // "Linear 'fc1'" (or "Linear 'id'" without a name), for messages
};

// A block: a named group of nodes and other blocks, drawn as one collapsible card. Blocks only
// annotate the flat graph (graph/blocks.h): nodes and edges stay in Graph::nodes and
// Graph::edges, so validation, the compiler, parameter names and export never see them.
// Every node or block belongs to at most one block, no block contains itself, and block ids
// share the node ids' namespace and rules.
struct Block {
  std::string id;
  std::string name;
  std::vector<std::string> members;  // node ids and nested block ids
  Position position;                 // the collapsed card's top-left
  bool collapsed = true;             // the editor shows one card (true) or the members in a frame
  bool operator==(const Block&) const = default;
};

struct PortRef {
  std::string node, port;
  bool operator==(const PortRef&) const = default;
};

struct Edge {
  PortRef from, to;  // from an output port to an input port
  bool operator==(const Edge&) const = default;
};

// One CSV column's choices, for a column that has any (graph/dataset_params.h describes each):
// its type, what fills its missing cells, and how its categories become inputs (data/table_prep.h).
struct ColumnSetting {
  std::string name{};
  std::string type = "auto";         // auto (detected) | numeric | categorical | date | text
  std::string missing = "auto";      // auto | drop | mean | median | most_frequent | constant | error
  std::string fill{};                // the constant
  bool indicator = true;             // a was-missing input beside a filled column
  std::string encoding = "one_hot";  // categories: one_hot | index (ids for an Embedding)
  bool operator==(const ColumnSetting&) const = default;
};

// Where the examples come from. kind: "mnist", "fashion-mnist" (folder of IDX files),
// "image_folder" (a folder of class folders of pictures) or "csv" (a file; `target` names the
// label column, `task` is "classification" or "regression"). The settings after `features` are
// described (range, default, which kinds they apply to) by graph/dataset_params.h.
struct DatasetBinding {
  std::string kind{};
  std::string path{};
  std::string target{};
  std::string task{};
  std::vector<std::string> features{};  // csv: the feature columns, in order; empty = all but the target and free text
  std::vector<ColumnSetting> columns{};  // csv: the columns with choices, in the file's order
  // csv: the delimiter (auto | comma | semicolon | tab) and the cells that mean "missing".
  std::string delimiter = "auto";
  std::string missing_values = "NA, N/A, NaN, null, ?";
  // image_folder: how each picture becomes an input, and what happens to bad files.
  int64_t height = 28, width = 28;
  std::string color = "gray";        // gray | rgb
  std::string fit = "crop";          // crop | pad | stretch
  std::string bad_files = "strict";  // strict | skip
  int64_t cache_mb = 0;              // decoded-image cache; 0 = a quarter of the memory
  int64_t loader_threads = 2;        // threads decoding ahead of the trainer
  int64_t stats_sample = 1000;       // training pictures the standardisation is computed on
  // Augmentation of training batches, for every image kind (the file's "augment" object).
  int64_t augment_shift = 0;         // pixels, each way
  bool augment_flip = false;         // horizontal, half of the pictures
  double augment_rotation = 0;       // degrees, each way
  double augment_brightness = 0;     // relative, each way
  double augment_contrast = 0;
  uint64_t augment_seed = 0;
  // text: characters per example, and the most distinct characters the file may hold (both
  // text kinds).
  int64_t seq_len = 64;
  int64_t max_vocab = 256;
  // text_classes: ids per example (0 = the longest example's length, capped), and lowercasing.
  int64_t max_length = 0;
  bool lowercase = false;
  bool operator==(const DatasetBinding&) const = default;
};

// How the graph trains: the optimizer and the learning-rate schedule (optim_config/config.h), and
// the batches, epochs, seed and device. graph/training_params.h describes each setting once
// (range, doc, file key) for the project reader and writer, the settings form and the checks.
struct TrainingSettings : optim::OptimizerConfig, optim::ScheduleConfig {
  int64_t batch_size = 100;
  int64_t epochs = 5;
  uint64_t seed = 1;
  std::string device = "cpu";  // cpu, cuda or cuda:N (parse_device)
  // The share of the training data held out (seeded) to evaluate every epoch and choose the
  // best checkpoint; the test split is evaluated once, at the end.
  double validation_fraction = 0.1;
  // On a CUDA device: the products' arithmetic (ops/precision.h) and whether the steady
  // training step is replayed as a CUDA graph (train/step.h). No effect on the CPU.
  std::string precision = "fp32";
  bool cuda_graphs = true;
  // Text datasets: batches as parallel streams whose recurrent state carries from one batch to
  // the next (truncated backpropagation through time); see data::stream_batches.
  bool carry_state = false;
  // Every how many training steps the per-node statistics are measured (train/stats_sampler.h),
  // starting with the first step; 0 = never.
  int64_t stats_every = 20;
  // Minutes between two saves of the run folder's `last` checkpoint at a batch boundary
  // (session/resume.h), beside the one at every epoch's end; 0 = at epoch ends only.
  double checkpoint_minutes = 10;
  // Gradient accumulation: one optimizer step per this many batches, as one batch of
  // batch_size × accumulate_steps examples would give (train/trainer.h).
  int64_t accumulate_steps = 1;
  // Data-parallel runs (mpirun): BatchNorm's statistics over the whole global batch rather than
  // each process's share (dist/, ops/replica_sum.h).
  bool sync_batchnorm = false;
  // Imbalanced classes (session/class_balance.h): "none"; "weights", every CrossEntropy and NLL
  // loss without class weights of its own weighs class c by n / (k · count_c) of the training
  // split; "sampler", training batches drawn with replacement, each example with probability
  // proportional to 1 / its class's count.
  std::string class_balance = "none";
  bool operator==(const TrainingSettings&) const = default;
};

// One swept setting of a sweep (graph/sweep_settings.h checks it, sweep/assignment.h applies it).
// `target` names what it sets: a training setting ("lr", "batch_size"), a dataset setting
// prefixed "dataset." ("dataset.augment.shift") or a node parameter or node setting
// "<node id>.<param>" ("fc1.out_features", "drop.p", "fc1.lr_mult"). Either `values` lists
// the values to try, or min..max is a range (scale "linear" or "log"; whole numbers for a
// target that takes them); a grid needs values for every parameter.
struct SweepParameter {
  std::string target{};
  std::vector<ParamValue> values{};  // empty: the range min..max
  double min = 0, max = 0;
  std::string scale = "linear";  // linear | log (min > 0)
  bool operator==(const SweepParameter&) const = default;
};

// A hyper-parameter sweep of the project: how trials are chosen and run, and what they vary.
// graph/sweep_settings.h describes each setting once (range, doc, file key), as the training
// settings are; the project file holds a "sweep" object only when one is defined (parameters).
struct SweepSettings {
  std::string method = "random";  // grid (every combination) | random (seeded) | tpe (adaptive)
  int64_t trials = 12;            // random and tpe: how many; grid: every combination, this ignored
  int64_t parallel = 2;           // trials at once on one machine (mpirun: one per rank)
  int64_t threads = 0;            // CPU threads of each trial; 0 = the machine's threads / parallel
  std::string metric = "auto";    // auto | validation_accuracy | validation_loss | train_loss
  uint64_t seed = 1;              // of the random and tpe draws (the trials' own seeds are theirs)
  std::vector<SweepParameter> parameters{};
  bool operator==(const SweepSettings&) const = default;
  bool defined() const { return !parameters.empty(); }
};

struct Graph {
  std::string description;  // what the project is and what it teaches, in a sentence or two ("" = none)
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<Block> blocks;
  DatasetBinding dataset;
  TrainingSettings training;
  SweepSettings sweep;  // defined() only for a project with a sweep
  std::string view;  // the editor's view state as a JSON object text, kept verbatim ("" = none)
  bool operator==(const Graph&) const = default;

  const Node* find(const std::string& id) const;
  Node* find(const std::string& id);
  const Block* find_block(const std::string& id) const;
  std::vector<const Edge*> edges_into(const std::string& node) const;
  std::vector<const Edge*> edges_from(const std::string& node) const;
  // `node` and every node it depends on through wires, in graph order: what "freeze up to
  // here" freezes. Empty for an unknown id.
  std::vector<std::string> upstream(const std::string& node) const;
};

// Node ids may use letters, digits, '_' and '-', and start with a letter or '_'.
bool valid_node_id(const std::string& id);

}  // namespace plexus::graph
