// The project file format (.plexus): canonical output (the documented MNIST example byte for
// byte), load -> save reproducing the file, every ParamValue kind and real numbers surviving
// exactly, the loader refusing malformed files with messages that name the file, the line and
// column and the JSON path (golden messages), and accepting files whose graph is merely wrong
// (that is the validator's business). A seeded fuzz test mutates valid projects thousands of
// times: each result loads (and then round-trips) or is refused with a ProjectError, never a
// crash or another exception; it must also pass under the sanitizer build.
//
// PLEXUS_PROJECT_FUZZ_ITERATIONS=N runs N mutations per seed text instead of 1000, and
// PLEXUS_PROJECT_FUZZ_SEED=S seeds the mutations differently.
#include "support/check.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "graph/dataset_params.h"
#include "graph/project.h"
#include "graph/validate.h"
#include "support/project_fuzz.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::graph;
namespace fs = std::filesystem;

namespace {

using plexus::testing::contains;
using plexus::testing::message_of;

using plexus::testing::read_all;
using plexus::testing::TempDir;
using plexus::testing::write_raw;

Node node(std::string id, std::string type, std::string name, std::map<std::string, ParamValue> params, double x,
          double y) {
  return Node{std::move(id), std::move(type), std::move(name), std::move(params), Position{x, y}};
}

Edge edge(std::string a, std::string ap, std::string b, std::string bp) {
  return Edge{PortRef{std::move(a), std::move(ap)}, PortRef{std::move(b), std::move(bp)}};
}

// The example of docs/project-format.md.
Graph mnist_mlp() {
  Graph g;
  g.nodes = {node("in", "Input", "input", {}, 40, 200),
             node("flat", "Flatten", "flatten", {}, 220, 160),
             node("fc1", "Linear", "fc1", {{"out_features", int64_t(128)}}, 400, 160),
             node("relu1", "ReLU", "relu1", {}, 580, 160),
             node("fc2", "Linear", "fc2", {{"out_features", int64_t(10)}}, 760, 160),
             node("loss", "CrossEntropy", "loss", {}, 940, 200)};
  g.edges = {edge("in", "x", "flat", "input"),    edge("flat", "output", "fc1", "input"),
             edge("fc1", "output", "relu1", "input"), edge("relu1", "output", "fc2", "input"),
             edge("fc2", "output", "loss", "input"),  edge("in", "y", "loss", "target")};
  g.dataset = {.kind = "mnist", .path = "data/mnist"};
  g.training.momentum = 0.9;
  g.view = R"({"zoom":1.0,"center":[490.0,180.0]})";
  return g;
}

// Every ParamValue kind, extreme values, a csv dataset, all training settings changed.
Graph conv_net() {
  Graph g;
  g.nodes = {
      node("in", "Input", "", {{"shape", std::vector<int64_t>{1, 28, 28}}}, -10.5, 0.25),
      node("conv1", "Conv2d", "conv 1",
           {{"out_channels", int64_t(32)}, {"kernel_size", int64_t(5)}, {"padding", int64_t(2)}, {"bias", false}}, 1e-300,
           -1e300),
      node("pool", "MaxPool2d", "pool", {{"kernel_size", int64_t(2)}}, 0.1, 0.2),
      node("bn", "BatchNorm2d", "bn", {{"eps", 1e-5}, {"momentum", 0.1}, {"affine", true}}, 3, 4),
      node("act", "LeakyReLU", "", {{"negative_slope", 0.01}}, 5, 6),
      node("drop", "Dropout", "drop", {{"p", 0.5}}, 7, 8),
      node("odd", "Whatever", "odd",
           {{"big", std::numeric_limits<int64_t>::max()},
            {"small", std::numeric_limits<int64_t>::min()},
            {"zero_real", 0.0},
            {"negative_zero", -0.0},
            {"one", 1.0},
            {"huge", 1e308},
            {"tiny", 4.9406564584124654e-324},
            {"third", 1.0 / 3.0},
            {"integral_real", 1e20},
            {"empty_list", std::vector<int64_t>{}},
            {"reals", std::vector<double>{0.5, -1e-3, 1e20}},
            {"integral_reals", std::vector<double>{1.0, 2.0}},
            {"list", std::vector<int64_t>{-1, 0, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}},
            {"mode", std::string("same")},
            {"empty_text", std::string()},
            {"a.b c", std::string("key needing quotes")}},
           9, 10),
      node("fc", "Linear", "fc", {{"out_features", int64_t(10)}, {"in_features", int64_t(0)}}, 11, 12),
      node("loss", "MSE", "loss", {}, 13, 14)};
  g.nodes[1].lr_mult = 0;  // the node settings: written where they are not 1
  g.nodes[7].lr_mult = 1.0 / 3.0;
  g.nodes[7].weight_decay_mult = 1000;
  g.edges = {edge("in", "x", "conv1", "input"), edge("conv1", "output", "pool", "input"),
             edge("pool", "output", "bn", "input"), edge("bn", "output", "act", "input"),
             edge("act", "output", "drop", "input"), edge("drop", "output", "fc", "input"),
             edge("fc", "output", "loss", "input"), edge("in", "y", "loss", "target")};
  g.dataset = {.kind = "csv", .path = "data/wine.csv", .target = "quality", .task = "regression"};
  g.training = TrainingSettings{{"adamw", 3e-4, 0.95, true, 0.01}, {"cosine", 7, 0.5, 250, 0.25}, 32, 100,
                                std::numeric_limits<uint64_t>::max(), "cuda"};
  return g;
}

// Half-finished: dangling edges, a cycle, unknown types, texts needing escapes, a rich view.
Graph messy() {
  Graph g;
  g.nodes = {node("a", "Linear", "na\xc3\xafve \"quoted\" \\ back\nslash\ttab\x01", {{"out_features", std::string("many")}}, 0,
                  0),
             node("b-2", "NoSuchLayer", "\xe2\x9c\x93 \xf0\x9f\x98\x80", {}, 1.5, -2.5),
             node("_c", "", "", {{"", int64_t(1)}}, 0, 0)};
  g.edges = {edge("a", "output", "b-2", "input"), edge("b-2", "output", "a", "input"),
             edge("ghost", "out", "a", "input"), edge("", "", "", "")};
  g.dataset = {.path = "only a path"};
  g.training.seed = 0;
  g.view =
      R"({"zoom":1.25,"center":[-3.5,2.0],"selected":["a","b-2"],"panels":{"open":true,"sizes":[200,300]},)"
      R"("note":null,"empty":{},"list":[],"nested":[[1,[2,[3]]],{"k":"v"}],"big":18446744073709551615,)"
      R"("text":"\"\\\n\u0000\u001fé"})";
  return g;
}

std::vector<Graph> sample_graphs() { return {mnist_mlp(), conv_net(), messy(), Graph{}}; }

// The first ```json block of docs/project-format.md.
std::string documented_example() {
  const std::string doc = read_all(fs::path(PLEXUS_SOURCE_DIR) / "docs" / "project-format.md");
  const size_t b = doc.find("```json\n");
  if (b == std::string::npos) return "<no ```json block in docs/project-format.md>";
  const size_t e = doc.find("```", b + 8);
  return doc.substr(b + 8, e - b - 8);
}

std::string load_error(const std::string& text) {
  return message_of<ProjectError>([&] { parse_project(text, "p.plexus"); });
}

std::string save_error(const Graph& g) {
  return message_of<ValueError>([&] { serialize_project(g); });
}

// {"format": 1, "nodes": [...], "edges": [...] <rest>}
std::string project(const std::string& nodes, const std::string& edges = "", const std::string& rest = "") {
  return std::string("{\"format\": 1, \"nodes\": [").append(nodes).append("], \"edges\": [").append(edges).append("]")
      .append(rest).append("}");
}

}  // namespace

TEST(canonicalMnistExample) {
  const std::string expected = R"({
  "format": 1,
  "nodes": [
    {
      "id": "in",
      "type": "Input",
      "name": "input",
      "params": {},
      "position": [40.0, 200.0]
    },
    {
      "id": "flat",
      "type": "Flatten",
      "name": "flatten",
      "params": {},
      "position": [220.0, 160.0]
    },
    {
      "id": "fc1",
      "type": "Linear",
      "name": "fc1",
      "params": {
        "out_features": 128
      },
      "position": [400.0, 160.0]
    },
    {
      "id": "relu1",
      "type": "ReLU",
      "name": "relu1",
      "params": {},
      "position": [580.0, 160.0]
    },
    {
      "id": "fc2",
      "type": "Linear",
      "name": "fc2",
      "params": {
        "out_features": 10
      },
      "position": [760.0, 160.0]
    },
    {
      "id": "loss",
      "type": "CrossEntropy",
      "name": "loss",
      "params": {},
      "position": [940.0, 200.0]
    }
  ],
  "edges": [
    {"from": ["in", "x"], "to": ["flat", "input"]},
    {"from": ["flat", "output"], "to": ["fc1", "input"]},
    {"from": ["fc1", "output"], "to": ["relu1", "input"]},
    {"from": ["relu1", "output"], "to": ["fc2", "input"]},
    {"from": ["fc2", "output"], "to": ["loss", "input"]},
    {"from": ["in", "y"], "to": ["loss", "target"]}
  ],
  "dataset": {
    "kind": "mnist",
    "path": "data/mnist"
  },
  "training": {
    "optimizer": "sgd",
    "lr": 0.1,
    "momentum": 0.9,
    "nesterov": false,
    "weight_decay": 0.0,
    "schedule": "none",
    "step_size": 1,
    "gamma": 0.1,
    "batch_size": 100,
    "epochs": 5,
    "validation_fraction": 0.1,
    "seed": 1,
    "precision": "fp32",
    "cuda_graphs": true,
    "carry_state": false,
    "stats_every": 20,
    "device": "cpu"
  },
  "view": {
    "zoom": 1.0,
    "center": [490.0, 180.0]
  }
}
)";
  COMPARE(serialize_project(mnist_mlp()), expected);
  COMPARE(documented_example(), expected);  // the docs show exactly what Plexus writes
  VERIFY(parse_project(expected, "mnist.plexus") == mnist_mlp());
}

TEST(roundTrip) {
  for (const Graph& g : sample_graphs()) {
    const std::string text = serialize_project(g);
    const Graph back = parse_project(text, "rt.plexus");
    VERIFY2(back == g, text.c_str());
    COMPARE(serialize_project(back), text);  // load -> save reproduces the file
  }
  // Every kind of value comes back as the same kind.
  const Graph back = parse_project(serialize_project(conv_net()), "rt.plexus");
  const auto& odd = back.find("odd")->params;
  VERIFY(std::holds_alternative<int64_t>(odd.at("big")));
  VERIFY(std::holds_alternative<double>(odd.at("one")));
  VERIFY(std::holds_alternative<double>(odd.at("integral_real")));
  VERIFY(std::holds_alternative<double>(odd.at("zero_real")));
  VERIFY(std::signbit(std::get<double>(odd.at("negative_zero"))));
  VERIFY(std::holds_alternative<std::vector<int64_t>>(odd.at("empty_list")));
  COMPARE(std::get<std::vector<double>>(odd.at("integral_reals")), (std::vector<double>{1.0, 2.0}));
  VERIFY(std::holds_alternative<std::string>(odd.at("mode")));
  VERIFY(std::holds_alternative<bool>(back.find("conv1")->params.at("bias")));
  COMPARE(back.training.seed, std::numeric_limits<uint64_t>::max());
  // The empty graph: only format, nodes, edges and the training settings.
  VERIFY(contains(serialize_project(Graph{}), "\"nodes\": [],\n  \"edges\": [],\n  \"training\": {"));
}

// The settings added for early stopping, the newer schedules and clipping: written when set, read
// back as set; a project without them saves without them (its file keeps its bytes).
TEST(stoppingScheduleAndClippingSettingsRoundTrip) {
  Graph g;
  const std::string plain = serialize_project(g);
  for (const char* key : {"clip_norm", "early_stopping", "monitor", "plateau", "pct_start", "end_factor"})
    VERIFY2(!contains(plain, key), key);
  g.training.schedule = "plateau";
  g.training.plateau_factor = 0.5;
  g.training.plateau_patience = 3;
  g.training.plateau_threshold_mode = "abs";
  g.training.early_stopping_patience = 4;
  g.training.early_stopping_min_delta = 0.001;
  g.training.monitor = "val_accuracy";
  g.training.clip_norm = 1.5;
  g.training.clip_value = 0.25;
  g.training.pct_start = 0.4;  // kept even where it does not apply
  const std::string text = serialize_project(g);
  VERIFY(contains(text, "\"early_stopping_patience\": 4") && contains(text, "\"clip_norm\": 1.5"));
  const Graph back = parse_project(text, "rt.plexus");
  VERIFY(back.training == g.training);
  COMPARE(serialize_project(back), text);
  g.training = {};
  COMPARE(serialize_project(g), plain);
}

// A 2-D window's value is one number or [h, w], a padding also a word: each reads back as written,
// and the example convolutions of plain numbers save byte for byte as they are.
TEST(windowPairsAndPaddingWordsRoundTrip) {
  Graph g;
  g.nodes = {{"a", "Conv2d", "a",
              {{"kernel_size", std::vector<int64_t>{5, 1}}, {"stride", int64_t(1)}, {"padding", std::string("same")},
               {"dilation", std::vector<int64_t>{2, 1}}},
              {}},
             {"b", "MaxPool2d", "b", {{"kernel_size", int64_t(2)}, {"padding", std::vector<int64_t>{1, 0}}}, {}}};
  const std::string text = serialize_project(g);
  VERIFY2(contains(text, "\"kernel_size\": [5, 1],"), text);
  VERIFY2(contains(text, "\"padding\": \"same\","), text);
  VERIFY2(contains(text, "\"stride\": 1\n"), text);
  const Graph back = parse_project(text, "p.plexus");
  VERIFY(back == g);
  COMPARE(serialize_project(back), text);
  // The examples' nodes (their blocks are laid out by hand) come back as written.
  for (const char* example : {"mnist_lenet", "fashion_lenet", "fashion_finetune"}) {
    const std::string file = read_all(fs::path(PLEXUS_SOURCE_DIR) / "examples" / (std::string(example) + ".plexus"));
    const size_t from = file.find("\"nodes\": ["), to = file.find("\"edges\": [");
    VERIFY(from != std::string::npos && to != std::string::npos && contains(file, "\"kernel_size\": 5"));
    VERIFY2(contains(serialize_project(parse_project(file, "p.plexus")), file.substr(from, to - from)), example);
  }
}

// Settings beyond kind and path: written only when they differ from the defaults (so older
// projects stay as they were), augmentation in its own object; all read back exactly.
TEST(datasetSettings) {
  Graph g;
  g.dataset = {.kind = "image_folder", .path = "photos"};
  COMPARE(serialize_project(g).find("height"), std::string::npos);
  g.dataset.height = 64;
  g.dataset.color = "rgb";
  g.dataset.fit = "pad";
  g.dataset.bad_files = "skip";
  g.dataset.cache_mb = 100;
  g.dataset.augment_flip = true;
  g.dataset.augment_rotation = 7.5;
  g.dataset.augment_seed = 42;
  const std::string text = serialize_project(g);
  VERIFY2(text.find("  \"dataset\": {\n    \"kind\": \"image_folder\",\n    \"path\": \"photos\",\n    \"height\": 64,\n"
                    "    \"color\": \"rgb\",\n    \"fit\": \"pad\",\n    \"bad_files\": \"skip\",\n    \"cache_mb\": 100,\n"
                    "    \"augment\": {\n      \"flip\": true,\n      \"rotation\": 7.5,\n      \"seed\": 42\n    }\n  }") !=
              std::string::npos,
          text.c_str());
  VERIFY(parse_project(text, "p.plexus") == g);
  COMPARE(serialize_project(parse_project(text, "p.plexus")), text);

  Graph csv;
  csv.dataset = {.kind = "csv", .path = "d.csv", .target = "label", .task = "classification", .features = {"b", "a,c"}};
  const std::string csv_text = serialize_project(csv);
  VERIFY2(csv_text.find("\"features\": [\"b\", \"a,c\"]") != std::string::npos, csv_text.c_str());
  VERIFY(parse_project(csv_text, "p.plexus") == csv);

  // Meaning is checked where the data is used: a file may hold an out-of-range size.
  Graph wrong = parse_project(project("", "", R"(, "dataset": {"kind": "image_folder", "height": 0, "fit": "zoom"})"),
                              "p.plexus");
  COMPARE(wrong.dataset.height, int64_t(0));
  VERIFY_THROWS(ValueError, check_dataset_values(wrong.dataset));
  try {
    check_dataset_values(wrong.dataset);
  } catch (const ValueError& e) {
    COMPARE(std::string(e.what()), std::string("dataset: height must be between 1 and 4096, got 0"));
  }
  wrong.dataset.height = 28;
  try {
    check_dataset_values(wrong.dataset);
    FAIL("an unknown fit passed");
  } catch (const ValueError& e) {
    COMPARE(std::string(e.what()), std::string("dataset: unknown fit 'zoom' (known: crop, pad, stretch)"));
  }
  // Settings of another kind are not checked (the form hides them) and for_kind resets them.
  Graph idx;
  idx.dataset = {.kind = "mnist", .path = "data/mnist"};
  idx.dataset.height = 0;
  check_dataset_values(idx.dataset);
  idx.dataset.augment_shift = 99;
  VERIFY_THROWS(ValueError, check_dataset_values(idx.dataset));
  const DatasetBinding reset = for_kind(idx.dataset, "csv");
  COMPARE(reset.height, int64_t(28));
  COMPARE(reset.augment_shift, int64_t(0));
  COMPARE(reset.task, std::string("classification"));
}

// A text file's settings and a run's carry_state: written when not the defaults, read back.
TEST(textSettings) {
  Graph g;
  g.dataset = {.kind = "text", .path = "names.txt"};
  COMPARE(serialize_project(g).find("seq_len"), std::string::npos);
  g.dataset.seq_len = 16;
  g.dataset.max_vocab = 40;
  g.training.carry_state = true;
  const std::string text = serialize_project(g);
  VERIFY2(contains(text, "  \"dataset\": {\n    \"kind\": \"text\",\n    \"path\": \"names.txt\",\n"
                         "    \"seq_len\": 16,\n    \"max_vocab\": 40\n  }"),
          text.c_str());
  VERIFY2(contains(text, "\"carry_state\": true"), text.c_str());
  VERIFY(parse_project(text, "p.plexus") == g);
  COMPARE(serialize_project(parse_project(text, "p.plexus")), text);

  g.dataset.seq_len = 1;
  COMPARE(message_of<ValueError>([&] { check_dataset_values(g.dataset); }),
          std::string("dataset: seq_len must be between 2 and 4096, got 1"));
  g.dataset.seq_len = 16;
  g.dataset.max_vocab = 70000;
  COMPARE(message_of<ValueError>([&] { check_dataset_values(g.dataset); }),
          std::string("dataset: max_vocab must be between 2 and 65536, got 70000"));
  // Only text reads them: another kind passes over them and for_kind resets them.
  const DatasetBinding csv = for_kind(g.dataset, "csv");
  COMPARE(csv.seq_len, int64_t(64));
  COMPARE(csv.max_vocab, int64_t(256));
  VERIFY(!dataset_value_applies(csv, "seq_len"));
  VERIFY(dataset_value_applies(g.dataset, "max_vocab"));
}

TEST(realNumbersAreWrittenToReadBackExactly) {
  auto written = [](double d) {
    Graph g;
    g.nodes = {node("n", "T", "", {{"v", d}}, 0, 0)};
    const std::string s = serialize_project(g);
    const size_t b = s.find("\"v\": ") + 5;
    return s.substr(b, s.find('\n', b) - b);
  };
  COMPARE(written(1.0), std::string("1.0"));
  COMPARE(written(0.1), std::string("0.1"));
  COMPARE(written(-0.0), std::string("-0.0"));
  COMPARE(written(100.0), std::string("100.0"));
  COMPARE(written(1e308), std::string("1e+308"));
  COMPARE(written(5e-324), std::string("5e-324"));
  COMPARE(written(1.0 / 3.0), std::string("0.3333333333333333"));
  COMPARE(written(123456.789), std::string("123456.789"));

  std::mt19937_64 rng(7);
  for (int i = 0; i < 5000; ++i) {
    const double d = i % 2 ? std::bit_cast<double>(rng()) : double(rng() % 2000000) / 1000.0 - 1000.0;
    if (!std::isfinite(d)) continue;
    Graph g;
    g.nodes = {node("n", "T", "", {{"v", d}}, d, -d)};
    g.training.lr = d;
    const Graph back = parse_project(serialize_project(g), "r.plexus");
    const double r = std::get<double>(back.nodes[0].params.at("v"));
    VERIFY2(std::bit_cast<uint64_t>(r) == std::bit_cast<uint64_t>(d), written(d).c_str());
    VERIFY(std::bit_cast<uint64_t>(back.training.lr) == std::bit_cast<uint64_t>(d));
    VERIFY(std::bit_cast<uint64_t>(back.nodes[0].position.y) == std::bit_cast<uint64_t>(-d));
  }
}

TEST(optionalKeysTakeDefaults) {
  const Graph g = parse_project(project(R"({"id": "a", "type": "Linear"})"), "p.plexus");
  COMPARE(g.nodes.size(), size_t(1));
  COMPARE(g.nodes[0].name, std::string());
  VERIFY(g.nodes[0].params.empty());
  VERIFY(g.nodes[0].position == Position{});
  VERIFY(g.dataset == DatasetBinding{});
  VERIFY(g.training == TrainingSettings{});
  COMPARE(g.view, std::string());
  // Training keys are each optional; integers are accepted for real numbers.
  const Graph t = parse_project(project("", "", R"(, "training": {"lr": 1, "epochs": 3, "momentum": 0})"), "p.plexus");
  COMPARE(t.training.lr, 1.0);
  COMPARE(t.training.epochs, int64_t(3));
  COMPARE(t.training.batch_size, TrainingSettings{}.batch_size);
  // An empty dataset object is the same as none.
  VERIFY(parse_project(project("", "", R"(, "dataset": {})"), "p.plexus").dataset == DatasetBinding{});
}

// A node's own training settings (graph/node_settings.h): on the node, after its position,
// only where they are not 1, so that a project without them reads and writes as before.
TEST(nodeSettings) {
  Graph g = mnist_mlp();
  const std::string plain = serialize_project(g);
  VERIFY(!contains(plain, "lr_mult"));
  g.find("fc1")->lr_mult = 0;
  g.find("fc2")->weight_decay_mult = 2.5;
  const std::string text = serialize_project(g);
  VERIFY2(contains(text, "\"position\": [400.0, 160.0],\n      \"lr_mult\": 0.0\n    }"), text.c_str());
  VERIFY2(contains(text, "\"position\": [760.0, 160.0],\n      \"weight_decay_mult\": 2.5\n    }"), text.c_str());
  const Graph back = parse_project(text, "p.plexus");
  VERIFY(back == g);
  COMPARE(back.find("fc1")->lr_mult, 0.0);
  COMPARE(back.find("fc1")->weight_decay_mult, 1.0);
  COMPARE(serialize_project(back), text);
  // Set back to 1, the file is the plain one again.
  g.find("fc1")->lr_mult = 1;
  g.find("fc2")->weight_decay_mult = 1;
  COMPARE(serialize_project(g), plain);
  // An integer reads as a real number.
  COMPARE(parse_project(project(R"({"id": "a", "type": "Linear", "lr_mult": 2})"), "p.plexus").nodes[0].lr_mult, 2.0);
  // Frozen (fine-tuning): written as true only, before the multipliers.
  g.find("fc1")->frozen = true;
  g.find("fc1")->lr_mult = 0.5;
  const std::string frozen = serialize_project(g);
  VERIFY2(contains(frozen, "\"position\": [400.0, 160.0],\n      \"frozen\": true,\n      \"lr_mult\": 0.5\n    }"),
          frozen.c_str());
  VERIFY(parse_project(frozen, "p.plexus") == g);
  const std::string why = load_error(project(R"({"id": "fc1", "type": "Linear", "frozen": 1})"));
  VERIFY2(contains(why, "nodes[0].frozen (node \"fc1\"): expected true or false"), why.c_str());
}

// A value of the wrong type is refused naming the node, the key and the place; one out of
// range loads, and the validator reports it on the node.
TEST(malformedNodeSettings) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {project(R"({"id": "fc1", "type": "Linear", "lr_mult": "2"})"),
       "p.plexus: nodes[0].lr_mult (node \"fc1\"): expected a number, got a string (\"2\") (line 1, column 68)"},
      {project(R"({"id": "a", "type": "T"}, {"id": "head", "type": "Linear", "weight_decay_mult": true})"),
       "p.plexus: nodes[1].weight_decay_mult (node \"head\"): expected a number, got a boolean (true) (line 1, column 105)"},
      {project(R"({"id": "fc1", "type": "Linear", "lr_mult": null})"),
       "p.plexus: nodes[0].lr_mult (node \"fc1\"): expected a number, got null (line 1, column 68)"},
      {project(R"({"id": "fc1", "type": "Linear", "lr_mult": [1]})"),
       "p.plexus: nodes[0].lr_mult (node \"fc1\"): expected a number, got an array (line 1, column 68)"},
      {project(R"({"id": "fc1", "type": "Linear", "lr_mult": 1, "lr_mult": 2})"),
       "p.plexus: nodes[0]: duplicate key \"lr_mult\" (line 1, column 71)"},
  };
  for (const auto& [text, expected] : cases) COMPARE(load_error(text), expected);

  const Graph g = parse_project(
      project(R"({"id": "fc1", "type": "Linear", "lr_mult": -1}, {"id": "act", "type": "ReLU", "lr_mult": -1},)"
              R"({"id": "fc2", "type": "Linear", "weight_decay_mult": 1001})"),
      "p.plexus");
  COMPARE(g.nodes[0].lr_mult, -1.0);
  const Validation v = validate(g, nullptr, {.memory = 0});
  const auto reported = [&](const std::string& node, const std::string& message) {
    return std::any_of(v.problems.begin(), v.problems.end(), [&](const Problem& p) {
      return p.node == node && p.severity == Severity::Error && p.message == message;
    });
  };
  VERIFY(reported("fc1", "Linear 'fc1': lr_mult must be between 0 and 1000, got -1"));
  VERIFY(reported("fc2", "Linear 'fc2': weight_decay_mult must be between 0 and 1000, got 1001"));
  // A node that learns nothing has no use for them: they are not checked.
  VERIFY(std::none_of(v.problems.begin(), v.problems.end(),
                      [](const Problem& p) { return p.node == "act" && contains(p.message, "lr_mult"); }));
}

TEST(loaderLeavesMeaningToTheValidator) {
  // Dangling edges, a cycle, a self-loop, an unknown type, unknown parameter names, a string
  // where the layer wants an integer, an integer where it wants a real, an unknown optimizer
  // and a negative epoch count all load: the validator explains them.
  const std::string text = project(
      R"({"id": "a", "type": "Linear", "params": {"out_features": "many", "p": 1, "colour": [1, 2]}},)"
      R"({"id": "b", "type": "Nope"})",
      R"({"from": ["a", "output"], "to": ["b", "input"]}, {"from": ["b", "output"], "to": ["a", "input"]},)"
      R"({"from": ["a", "output"], "to": ["a", "input"]}, {"from": ["ghost", "x"], "to": ["", ""]})",
      R"(, "training": {"optimizer": "telepathy", "epochs": -3, "lr": -1})");
  const Graph g = parse_project(text, "p.plexus");
  COMPARE(g.edges.size(), size_t(4));
  VERIFY(std::holds_alternative<std::string>(g.nodes[0].params.at("out_features")));
  VERIFY(std::holds_alternative<int64_t>(g.nodes[0].params.at("p")));  // not converted: no registry here
  COMPARE(g.training.optimizer, std::string("telepathy"));
  COMPARE(g.training.epochs, int64_t(-3));
}

TEST(viewIsKeptAndNormalised) {
  const std::string text =
      project("", "", ",\n \"view\" : { \"zoom\" : 2 ,\n \"b\":[ 1.50, 2e3 ], \"a\" : {\"x\": null} , \"s\": \"\\u00e9\\/\" }");
  const Graph g = parse_project(text, "p.plexus");
  COMPARE(g.view, std::string(R"({"zoom":2,"b":[1.5,2000.0],"a":{"x":null},"s":"é/"})"));  // key order kept
  const std::string saved = serialize_project(g);
  VERIFY2(contains(saved, "  \"view\": {\n    \"zoom\": 2,\n    \"b\": [1.5, 2000.0],\n    \"a\": {\n      \"x\": null\n"
                          "    },\n    \"s\": \"é/\"\n  }\n}\n"),
          saved.c_str());
  VERIFY(parse_project(saved, "p.plexus") == g);
}

// The description (what the start page says a project teaches): optional, right after the
// format where a reader of the file sees it first, written only when there is one, kept exactly.
TEST(descriptionIsOptionalAndKept) {
  COMPARE(parse_project(project(""), "p.plexus").description, std::string());
  VERIFY(!contains(serialize_project(Graph{}), "description"));
  Graph g = mnist_mlp();
  g.description = "Digits with a \"two-layer\" MLP: Flatten, then Linear\nand ReLU. é";
  const std::string text = serialize_project(g);
  VERIFY2(text.starts_with("{\n  \"format\": 1,\n  \"description\": \"Digits with a \\\"two-layer\\\" MLP: Flatten, then "
                           "Linear\\nand ReLU. é\",\n  \"nodes\": [\n"),
          text.c_str());
  const Graph back = parse_project(text, "p.plexus");
  COMPARE(back.description, g.description);
  COMPARE(serialize_project(back), text);
}

TEST(byteOrderMarkIsSkipped) {
  const std::string text = serialize_project(mnist_mlp());
  VERIFY(parse_project("\xEF\xBB\xBF" + text, "bom.plexus") == mnist_mlp());
  COMPARE(load_error("\xEF\xBB{}"),
          std::string("p.plexus: line 1, column 1: the file starts with a damaged UTF-8 byte order mark (a whole one, "
                      "EF BB BF, is allowed)"));
  COMPARE(load_error("\xEF\xBB\xBF"), std::string("p.plexus: the file is empty (a Plexus project is a JSON object)"));
}

TEST(syntaxErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\n  \"format\": 1\n  \"nodes\": [],\n  \"edges\": []\n}",
       "p.plexus: line 3, column 3: expected ',' or '}', found \"nodes\""},
      {"{\"format\": 1, \"nodes\": [1 2]}", "p.plexus: line 1, column 27: expected ',' or ']', found '2'"},
      {"{\"format\" 1}", "p.plexus: line 1, column 11: expected ':' after the key, found '1'"},
      {"{\"format\": tru}", "p.plexus: line 1, column 12: expected a value, found 'tru'"},
      {"{\"format\": 1,}",
       "p.plexus: line 1, column 14: expected a key in double quotes, found '}' (a trailing comma is not allowed)"},
      {"{\"nodes\": [1,]}", "p.plexus: line 1, column 14: expected a value, found ']' (a trailing comma is not allowed)"},
      {"{format: 1}", "p.plexus: line 1, column 2: expected a key in double quotes or '}', found 'format'"},
      {"{\"format\": 1} x", "p.plexus: line 1, column 15: expected the end of the file, found 'x'"},
      {"{\"format\": 1,\n \"nodes\": [", "p.plexus: line 2, column 12: expected a value, found the end of the file"},
      {"{\"a\": \"x\ny\"}",
       "p.plexus: line 1, column 7: invalid string: control character U+000A (LF) must be escaped to \\u000A or \\n"},
      {"{\"a\": \"abc", "p.plexus: line 1, column 7: invalid string: missing closing quote"},
      {"{\"a\": \"\xff\"}", "p.plexus: line 1, column 7: invalid string: ill-formed UTF-8 byte"},
      {"{\"a\": 01}",
       "p.plexus: line 1, column 7: invalid number '01': a number does not start with 0 unless it is 0 or 0.something"},
      {"{\"a\": -}", "p.plexus: line 1, column 7: invalid number: expected digit after '-', found '-'"},
      {"{\"a\": 1.}", "p.plexus: line 1, column 7: invalid number: expected digit after '.', found '1.'"},
      {"// comment\n{}", "p.plexus: line 1, column 1: expected a value, found '//'"},
      {"{\"format\": 1, \"nodes\": [], \"format\": 1}", "p.plexus: duplicate key \"format\" (line 1, column 28)"},
  };
  for (const auto& [text, expected] : cases) COMPARE(load_error(text), expected);
}

TEST(columnsCountCharactersAndLinesCountLineFeeds) {
  // "é" is two bytes and one column; CRLF ends a line like LF.
  COMPARE(load_error("{\"format\": 1,\r\n \"é\": \"é\" \"x\"}"),
          std::string("p.plexus: line 2, column 11: expected ',' or '}', found \"x\""));
  COMPARE(load_error(project(R"({"id": "a", "type": "é", "name": 5})")),
          std::string("p.plexus: nodes[0].name: expected a string, got an integer (5) (line 1, column 58)"));
}

TEST(versioning) {
  COMPARE(load_error(R"({"format": 3, "nodes": "a newer layout", "edges": {}})"),
          std::string("p.plexus: was written by a newer Plexus (format 3); this version reads formats up to 2"));
  COMPARE(load_error(R"({"format": 18446744073709551615})"),
          std::string("p.plexus: was written by a newer Plexus (format 18446744073709551615); this version reads formats up to 2"));
  COMPARE(load_error(R"({"nodes": [], "edges": []})"),
          std::string("p.plexus: missing \"format\", the format version: this is not a Plexus project file (line 1, "
                      "column 1)"));
  COMPARE(load_error(R"({"format": "1", "nodes": [], "edges": []})"),
          std::string("p.plexus: format: expected an integer, got a string (\"1\") (line 1, column 12)"));
  COMPARE(load_error(R"({"format": 1.0, "nodes": [], "edges": []})"),
          std::string("p.plexus: format: expected an integer, got a number (1.0) (line 1, column 12)"));
  COMPARE(load_error(R"({"format": 0, "nodes": [], "edges": []})"),
          std::string("p.plexus: format: invalid format version 0; this version reads formats up to 2 (line 1, column 12)"));
  COMPARE(load_error(R"({"format": -1})"),
          std::string("p.plexus: format: invalid format version -1; this version reads formats up to 2 (line 1, column 12)"));
}

TEST(structuralErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"format": 1, "edges": []})", "p.plexus: missing \"nodes\" (the list of nodes, may be empty) (line 1, column 1)"},
      {R"({"format": 1, "nodes": []})", "p.plexus: missing \"edges\" (the list of edges, may be empty) (line 1, column 1)"},
      {project("", "", R"(, "extra": true)"),
       "p.plexus: unknown key \"extra\"; a project has format, description, nodes, edges, blocks, dataset, training, "
       "sweep and view (line 1, column 41)"},
      {R"({"format": 1, "description": 3, "nodes": [], "edges": []})",
       "p.plexus: description: expected a string, got an integer (3) (line 1, column 30)"},
      {R"({"format": 1, "description": ["a"], "nodes": [], "edges": []})",
       "p.plexus: description: expected a string, got an array (line 1, column 30)"},
      {R"({"format": 1, "nodes": {}, "edges": []})",
       "p.plexus: nodes: expected an array of nodes, got an object (line 1, column 24)"},
      {project("\"a\""), "p.plexus: nodes[0]: expected an object (a node), got a string (\"a\") (line 1, column 25)"},
      {project(R"({"type": "Linear"})"), "p.plexus: nodes[0]: missing \"id\" (line 1, column 25)"},
      {project(R"({"id": "a"})"), "p.plexus: nodes[0]: missing \"type\" (line 1, column 25)"},
      {project(R"({"id": "a", "type": "T", "colour": "red"})"),
       "p.plexus: nodes[0]: unknown key \"colour\"; a node has id, type, name, params, position, frozen, lr_mult "
       "and weight_decay_mult (line 1, column 50)"},
      {project(R"({"id": 7, "type": "T"})"),
       "p.plexus: nodes[0].id: expected a string, got an integer (7) (line 1, column 32)"},
      {project(R"({"id": "a", "type": null})"),
       "p.plexus: nodes[0].type: expected a string, got null (line 1, column 45)"},
      {project(R"({"id": "a", "type": "T", "params": []})"),
       "p.plexus: nodes[0].params: expected an object mapping parameter names to values, got an array (line 1, column 60)"},
      {project(R"({"id": "a", "type": "T", "params": {"out_features": null}})"),
       "p.plexus: nodes[0].params.out_features: expected a number, true or false, a string, an array of numbers "
       "or an array of names, got null (line 1, column 77)"},
      {project(R"({"id": "a", "type": "T", "params": {"k": [3, "3"]}})"),
       "p.plexus: nodes[0].params.k[1]: expected an integer, got a string (\"3\") (line 1, column 70)"},
      {project(R"({"id": "a", "type": "T", "params": {"k": ["a", 3]}})"),
       "p.plexus: nodes[0].params.k[1]: expected a string, got an integer (3) (line 1, column 72)"},
      {project(R"({"id": "a", "type": "T", "params": {"a b": {}}})"),
       "p.plexus: nodes[0].params[\"a b\"]: expected a number, true or false, a string, an array of numbers or an "
       "array of names, got an object (line 1, column 68)"},
      {project(R"({"id": "a", "type": "T", "params": {"w": [0.5, "3"]}})"),
       "p.plexus: nodes[0].params.w[1]: expected a number, got a string (\"3\") (line 1, column 72)"},
      {project(R"({"id": "a", "type": "T", "position": [1]})"),
       "p.plexus: nodes[0].position: expected [x, y], got an array of 1 element (line 1, column 62)"},
      {project(R"({"id": "a", "type": "T", "position": [1, true]})"),
       "p.plexus: nodes[0].position[1]: expected a number, got a boolean (true) (line 1, column 66)"},
      {project("", "[]"), "p.plexus: edges[0]: expected an object (an edge), got an array (line 1, column 38)"},
      {project("", R"({"from": ["a", "x"]})"),
       "p.plexus: edges[0]: missing \"to\" ([node, port]) (line 1, column 38)"},
      {project("", R"({"from": ["a", "x"], "to": ["b", "y", "z"]})"),
       "p.plexus: edges[0].to: expected [node, port], got an array of 3 elements (line 1, column 65)"},
      {project("", R"({"from": "a.x", "to": ["b", "y"]})"),
       "p.plexus: edges[0].from: expected [node, port], got a string (\"a.x\") (line 1, column 47)"},
      {project("", R"({"from": ["a", 1], "to": ["b", "y"]})"),
       "p.plexus: edges[0].from[1]: expected a string, got an integer (1) (line 1, column 53)"},
      {project("", R"({"from": ["a", "x"], "to": ["b", "y"], "label": ""})"),
       "p.plexus: edges[0]: unknown key \"label\"; an edge has from and to (line 1, column 77)"},
      {project("", "", R"(, "dataset": "mnist")"),
       "p.plexus: dataset: expected an object, got a string (\"mnist\") (line 1, column 52)"},
      {project("", "", R"(, "dataset": {"kind": "csv", "target": 3})"),
       "p.plexus: dataset.target: expected a string, got an integer (3) (line 1, column 78)"},
      {project("", "", R"(, "dataset": {"file": "x"})"),
       "p.plexus: dataset: unknown key \"file\"; a dataset has kind, path, target, task, features, columns, augment, height, "
       "width, color, fit, bad_files, cache_mb, loader_threads, stats_sample, delimiter, missing_values, seq_len, "
       "max_vocab, max_length and lowercase (line 1, column 53)"},
      {project("", "", R"(, "dataset": {"columns": {"a": {"colour": 1}}})"),
       "p.plexus: dataset.columns.a: unknown key \"colour\"; a column has type, missing, fill, indicator and encoding "
       "(line 1, column 71)"},
      {project("", "", R"(, "dataset": {"columns": {"a": {"indicator": "yes"}}})"),
       "p.plexus: dataset.columns.a.indicator: expected true or false, got a string (\"yes\") (line 1, column 84)"},
      {project("", "", R"(, "dataset": {"augment": {"zoom": 2}})"),
       "p.plexus: dataset.augment: unknown key \"zoom\"; augment has shift, flip, rotation, brightness, contrast and seed "
       "(line 1, column 65)"},
      {project("", "", R"(, "dataset": {"augment": {"flip": 1}})"),
       "p.plexus: dataset.augment.flip: expected true or false, got an integer (1) (line 1, column 73)"},
      {project("", "", R"(, "dataset": {"features": "a,b"})"),
       "p.plexus: dataset.features: expected a list of column names, got a string (\"a,b\") (line 1, column 65)"},
      {project("", "", R"(, "dataset": {"features": ["a", 2]})"),
       "p.plexus: dataset.features[1]: expected a string, got an integer (2) (line 1, column 71)"},
      {project("", "", R"(, "dataset": {"height": "big"})"),
       "p.plexus: dataset.height: expected an integer, got a string (\"big\") (line 1, column 63)"},
      {project("", "", R"(, "training": {"lr": "fast"})"),
       "p.plexus: training.lr: expected a number, got a string (\"fast\") (line 1, column 60)"},
      {project("", "", R"(, "training": {"epochs": 2.5})"),
       "p.plexus: training.epochs: expected an integer, got a number (2.5) (line 1, column 64)"},
      {project("", "", R"(, "training": {"nesterov": 1})"),
       "p.plexus: training.nesterov: expected true or false, got an integer (1) (line 1, column 66)"},
      {project("", "", R"(, "training": {"seed": -1})"),
       "p.plexus: training.seed: expected a non-negative integer, got an integer (-1) (line 1, column 62)"},
      {project("", "", R"(, "training": {"learning_rate": 0.1})"),
       "p.plexus: training: unknown key \"learning_rate\"; training has optimizer, lr, momentum, nesterov, weight_decay, "
       "clip_norm, clip_value, schedule, step_size, gamma, warmup_steps, warmup_start_factor, end_factor, pct_start, "
       "div_factor, final_div_factor, plateau_factor, plateau_patience, plateau_threshold, plateau_threshold_mode, "
       "plateau_cooldown, plateau_min_lr, batch_size, epochs, validation_fraction, seed, precision, cuda_graphs, "
       "carry_state, accumulate_steps, sync_batchnorm, class_balance, early_stopping_patience, monitor, monitor_mode, "
       "early_stopping_min_delta, stats_every, checkpoint_minutes and device "
       "(line 1, column 54)"},
      {project("", "", R"(, "view": [1])"), "p.plexus: view: expected an object, got an array (line 1, column 49)"},
      {project(R"({"id": "a", "id": "b", "type": "T"})"),
       "p.plexus: nodes[0]: duplicate key \"id\" (line 1, column 37)"},
      {project(R"({"id": "a", "type": "T", "params": {"k": 1, "k": 2}})"),
       "p.plexus: nodes[0].params: duplicate key \"k\" (line 1, column 69)"},
  };
  for (const auto& [text, expected] : cases) COMPARE(load_error(text), expected);
}

TEST(nodeIds) {
  COMPARE(load_error(project(R"({"id": "fc1", "type": "T"}, {"id": "x", "type": "T"}, {"id": "fc1", "type": "T"})")),
          std::string("p.plexus: nodes[2].id: duplicate node id \"fc1\", also used by nodes[0] (line 1, column 86)"));
  const std::string rule =
      " is not a valid node id; ids use letters, digits, '_' and '-', start with a letter or '_' and have at most 128 "
      "characters";
  COMPARE(load_error(project(R"({"id": "1st", "type": "T"})")),
          "p.plexus: nodes[0].id: \"1st\"" + rule + " (line 1, column 32)");
  COMPARE(load_error(project(R"({"id": "a.b", "type": "T"})")),
          "p.plexus: nodes[0].id: \"a.b\"" + rule + " (line 1, column 32)");
  COMPARE(load_error(project(R"({"id": "", "type": "T"})")), "p.plexus: nodes[0].id: \"\"" + rule + " (line 1, column 32)");
  COMPARE(load_error(project(R"({"id": "new\nline", "type": "T"})")),
          "p.plexus: nodes[0].id: \"new\\u000aline\"" + rule + " (line 1, column 32)");
}

TEST(integersOutOfRange) {
  COMPARE(load_error(project(R"({"id": "a", "type": "T", "params": {"n": 9223372036854775808}})")),
          std::string("p.plexus: nodes[0].params.n: integer 9223372036854775808 is out of range; the largest allowed is "
                      "9223372036854775807 (line 1, column 66)"));
  COMPARE(load_error(project(R"({"id": "a", "type": "T", "params": {"n": -9223372036854775809}})")),
          std::string("p.plexus: nodes[0].params.n: integer -9223372036854775809 does not fit in 64 bits (line 1, column 66)"));
  COMPARE(load_error(project(R"({"id": "a", "type": "T", "params": {"n": [1, 99999999999999999999]}})")),
          std::string("p.plexus: nodes[0].params.n[1]: integer 99999999999999999999 does not fit in 64 bits (line 1, column 70)"));
  COMPARE(load_error(project("", "", R"(, "training": {"epochs": 18446744073709551615})")),
          std::string("p.plexus: training.epochs: integer 18446744073709551615 is out of range; the largest allowed is "
                      "9223372036854775807 (line 1, column 64)"));
  COMPARE(load_error(project("", "", R"(, "training": {"seed": 18446744073709551616})")),
          std::string("p.plexus: training.seed: integer 18446744073709551616 does not fit in 64 bits (line 1, column 62)"));
  COMPARE(load_error(project("", "", R"(, "training": {"lr": 1e400})")),
          std::string("p.plexus: training.lr: number 1e400 is out of range (line 1, column 60)"));
  COMPARE(load_error(project("", "", R"(, "view": {"x": [-1e999]})")),
          std::string("p.plexus: view.x[0]: number -1e999 is out of range (line 1, column 56)"));
  COMPARE(load_error(project("", "", ", \"view\": {\"x\": " + std::string(5000, '9') + "}")),
          std::string("p.plexus: view.x: integer 999999999999999999999999999999... does not fit in 64 bits (line 1, column "
                      "55)"));
  // The edges of the ranges load.
  const Graph g = parse_project(
      project(R"({"id": "a", "type": "T", "params": {"max": 9223372036854775807, "min": -9223372036854775808}})", "",
              R"(, "training": {"seed": 18446744073709551615}, "view": {"u": 18446744073709551615})"),
      "p.plexus");
  COMPARE(std::get<int64_t>(g.nodes[0].params.at("min")), std::numeric_limits<int64_t>::min());
  COMPARE(g.training.seed, std::numeric_limits<uint64_t>::max());
  COMPARE(g.view, std::string(R"({"u":18446744073709551615})"));
}

TEST(deepNestingIsRefusedWithoutRecursion) {
  COMPARE(load_error(std::string(100000, '[')),
          std::string("p.plexus: line 1, column 65: the JSON nests deeper than 64 levels"));
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  COMPARE(load_error(objects), std::string("p.plexus: line 1, column 321: the JSON nests deeper than 64 levels"));
  // 64 levels are fine (the view is level 2).
  const std::string view63 = std::string(62, '[') + std::string(62, ']');
  const Graph g = parse_project(project("", "", ", \"view\": {\"deep\": " + view63 + "}"), "p.plexus");
  COMPARE(parse_project(serialize_project(g), "p.plexus").view, g.view);
  const std::string view64 = std::string(63, '[') + std::string(63, ']');
  COMPARE(load_error(project("", "", ", \"view\": {\"deep\": " + view64 + "}")),
          std::string("p.plexus: line 1, column 120: the JSON nests deeper than 64 levels"));
}

TEST(emptyAndNonObjectFiles) {
  COMPARE(load_error(""), std::string("p.plexus: the file is empty (a Plexus project is a JSON object)"));
  COMPARE(load_error(" \n\t\r\n"), std::string("p.plexus: the file is empty (a Plexus project is a JSON object)"));
  COMPARE(load_error("[]"),
          std::string("p.plexus: expected a JSON object at the top level, got an array (line 1, column 1)"));
  COMPARE(load_error("\n  42"),
          std::string("p.plexus: expected a JSON object at the top level, got an integer (42) (line 2, column 3)"));
  COMPARE(load_error("null"), std::string("p.plexus: expected a JSON object at the top level, got null (line 1, column 1)"));
  COMPARE(load_error("{}"),
          std::string("p.plexus: missing \"format\", the format version: this is not a Plexus project file (line 1, "
                      "column 1)"));
  COMPARE(load_error(std::string("{\"format\": 1,\0 \"nodes\": []}", 27)),
          std::string("p.plexus: line 1, column 14: expected a key in double quotes, found a NUL byte"));
}

TEST(nulBytesAreNotTheEndOfTheFile) {
  // nlohmann's lexer stops at a NUL byte as if the input ended there; the loader does not.
  const std::string text = serialize_project(mnist_mlp());
  COMPARE(load_error(text + std::string(1, '\0') + "garbage"),
          std::string("p.plexus: line 87, column 1: expected the end of the file, found a NUL byte"));
  COMPARE(load_error(std::string(1, '\0')), std::string("p.plexus: line 1, column 1: expected a value, found a NUL byte"));
  COMPARE(load_error(std::string("{\"a\": \"x\0y\"}", 12)),
          std::string("p.plexus: line 1, column 7: invalid string: control character U+0000 (NUL) must be escaped to "
                      "\\u0000"));
}

TEST(largeArraysLoad) {
  std::string list;
  for (int i = 0; i < 200000; ++i) {
    if (i) list += ',';
    list += std::to_string(i);
  }
  const Graph g = parse_project(project(R"({"id": "a", "type": "T", "params": {"big": [)" + list + "]}}"), "p.plexus");
  COMPARE(std::get<std::vector<int64_t>>(g.nodes[0].params.at("big")).size(), size_t(200000));
}

TEST(serializeRefusesWhatCouldNotBeReadBack) {
  Graph g = mnist_mlp();
  g.nodes[2].id = "fc 1";
  COMPARE(save_error(g), std::string("cannot save the project: nodes[2].id \"fc 1\" is not a valid node id"));
  g = mnist_mlp();
  g.nodes[3].id = "fc1";
  COMPARE(save_error(g),
          std::string("cannot save the project: nodes[3].id: duplicate node id \"fc1\", also used by nodes[2]"));
  g = mnist_mlp();
  g.nodes[2].params["p"] = std::nan("");
  COMPARE(save_error(g), std::string("cannot save the project: nodes[2].params.p is not a finite number (nan)"));
  g = mnist_mlp();
  g.nodes[0].position.y = -INFINITY;
  COMPARE(save_error(g), std::string("cannot save the project: nodes[0].position[1] is not a finite number (-inf)"));
  g = mnist_mlp();
  g.training.lr = INFINITY;
  COMPARE(save_error(g), std::string("cannot save the project: training.lr is not a finite number (inf)"));
  g = mnist_mlp();
  g.nodes[1].name = "bad \xC3";
  COMPARE(save_error(g), std::string("cannot save the project: nodes[1].name is not valid UTF-8"));
  g = mnist_mlp();
  g.edges[1].to.port = "\xED\xA0\x80";  // a UTF-16 surrogate encoded as UTF-8
  COMPARE(save_error(g), std::string("cannot save the project: edges[1].to[1] is not valid UTF-8"));
  g = mnist_mlp();
  g.nodes[1].params["\xC0\xAF"] = int64_t(1);  // overlong '/'
  VERIFY(contains(save_error(g), "is not valid UTF-8"));
  g = mnist_mlp();
  g.view = "[1, 2]";
  COMPARE(save_error(g), std::string("cannot save the project: the view state must be a JSON object, got an array"));
  g.view = "{\"zoom\": }";
  COMPARE(save_error(g),
          std::string("cannot save the project: the view state: line 1, column 10: expected a value, found '}'"));
  g.view = "{\"a\":" + std::string(63, '[') + std::string(63, ']') + "}";  // 64 levels alone, 65 in the file
  COMPARE(save_error(g),
          std::string("cannot save the project: the view state: line 1, column 68: the JSON nests deeper than 63 levels"));
}

// Edges from a node's later output ports (a Split's third piece, a GRU's final state) are saved
// with their port names and load back to the same graph, which still validates.
TEST(edgesFromLaterPortsRoundTrip) {
  Graph g;
  g.nodes = {node("in", "Input", "", {}, 0, 0),
             node("split", "Split", "", {{"sections", std::vector<int64_t>{1, 2, 3}}, {"dim", int64_t(2)}}, 200, 0),
             node("gru", "GRU", "", {{"hidden_size", int64_t(4)}}, 400, 0),
             node("fc", "Linear", "", {{"out_features", int64_t(3)}}, 600, 0),
             node("loss", "CrossEntropy", "", {}, 800, 0)};
  g.edges = {edge("in", "x", "split", "input"), edge("split", "output2", "gru", "input"),
             edge("gru", "state", "fc", "input"), edge("fc", "output", "loss", "input"),
             edge("in", "y", "loss", "target")};
  const TempDir dir;
  const fs::path file = dir.path() / "pieces.plexus";
  save_project(file, g);
  VERIFY(contains(read_all(file), "\"from\": [\"split\", \"output2\"]"));
  VERIFY(contains(read_all(file), "\"from\": [\"gru\", \"state\"]"));
  const Graph back = load_project(file);
  VERIFY(back == g);
  const DatasetInfo info{{5, 6}, {}, 3};
  const Validation v = validate(back, &info);
  VERIFY2(v.ok(), v.problems.empty() ? "" : to_string(v.problems[0]).c_str());
  COMPARE(*v.shapes.edge_shapes[1], (Shape{5, 3}));
  COMPARE(*v.shapes.edge_shapes[2], (Shape{4}));
}

TEST(saveAndLoadFiles) {
  const TempDir dir;
  const fs::path root = dir.path();
  const fs::path file = root / "mnist.plexus";
  save_project(file, mnist_mlp());
  COMPARE(read_all(file), serialize_project(mnist_mlp()));
  VERIFY(load_project(file) == mnist_mlp());

  // A graph that cannot be saved leaves the file as it was.
  Graph bad = conv_net();
  bad.nodes[0].id = "";
  VERIFY(contains(message_of<ValueError>([&] { save_project(file, bad); }), "is not a valid node id"));
  COMPARE(read_all(file), serialize_project(mnist_mlp()));
  save_project(file, conv_net());
  VERIFY(load_project(file) == conv_net());
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(root)) ++entries;
  COMPARE(entries, size_t(1));  // no temporary left behind

  // Errors name the file.
  write_raw(root / "broken.plexus", "{\n  \"format\": 1\n  \"nodes\": []\n}\n");
  const std::string broken = (root / "broken.plexus").string();
  COMPARE(message_of<ProjectError>([&] { load_project(root / "broken.plexus"); }),
          broken + ": line 3, column 3: expected ',' or '}', found \"nodes\"");
  const std::string missing = (root / "missing.plexus").string();
  COMPARE(message_of<IoError>([&] { load_project(root / "missing.plexus"); }),
          missing + ": cannot open: No such file or directory");
  COMPARE(message_of<IoError>([&] { load_project(root); }), root.string() + ": is a directory, not a project file");
  const fs::path huge = root / "huge.plexus";
  write_raw(huge, "{");
  fs::resize_file(huge, kProjectMaxFileSize + 1);  // sparse
  COMPARE(message_of<ProjectError>([&] { load_project(huge); }),
          huge.string() + ": the file is larger than 256 MiB, too large for a Plexus project");
}

TEST(fuzz) {
  int iterations = 1000;
  if (const char* env = std::getenv("PLEXUS_PROJECT_FUZZ_ITERATIONS")) iterations = std::atoi(env);
  Graph grouped = mnist_mlp();  // nested blocks, one of them open
  grouped.blocks = {{"hidden", "hidden layer", {"fc1", "relu1"}, {400, 160}, true},
                    {"head", "head", {"fc2", "hidden"}, {400, 140}, false}};
  const std::vector<std::string> seeds = {serialize_project(mnist_mlp()), serialize_project(conv_net()),
                                          serialize_project(messy()), serialize_project(grouped)};
  uint64_t seed_value = 20240601;
  if (const char* env = std::getenv("PLEXUS_PROJECT_FUZZ_SEED")) seed_value = std::strtoull(env, nullptr, 10);
  std::mt19937_64 rng(seed_value);
  const DatasetInfo mnist{{1, 28, 28}, {}, 10};
  int loaded = 0, refused = 0;
  for (const std::string& seed : seeds) {
    VERIFY(parse_project(seed, "seed.plexus") == parse_project(serialize_project(parse_project(seed, "s")), "s"));
    for (int i = 0; i < iterations; ++i) {
      const std::string text = plexus::testing::mutate_project_text(seed, rng);
      try {
        const Graph g = parse_project(text, "fuzz.plexus");
        ++loaded;
        // Whatever loads saves, and what is saved loads back the same and saves the same.
        const std::string saved = serialize_project(g);
        const Graph back = parse_project(saved, "saved.plexus");
        VERIFY2(back == g, text.c_str());
        VERIFY2(serialize_project(back) == saved, text.c_str());
        // The validator explains whatever loads, without throwing, with or without a dataset.
        validate(g, &mnist);
        validate(g, nullptr);
      } catch (const ProjectError& e) {
        ++refused;
        VERIFY2(std::string(e.what()).starts_with("fuzz.plexus: "), e.what());
      } catch (const std::exception& e) {
        const std::string what = std::string(typeid(e).name()).append(": ").append(e.what()).append("\n").append(text);
        FAIL(what.c_str());
      }
    }
  }
  std::printf("INFO   : fuzz: %d loaded, %d refused\n", loaded, refused);
  VERIFY(loaded > iterations / 5);   // the mutations leave plenty of loadable files...
  VERIFY(refused > iterations / 2);  // ...and break plenty
}

