// Importing foreign weights (session/weights_import.h): the matcher's three passes (exact
// names, PyTorch module paths mapped onto node ids and names, order and shape), the account
// of every tensor (matched, shape-mismatched, left out, missing), PyTorch's LSTM tensors and
// BatchNorm counter, and copying a plan into a model changing only what it matched.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "nn/layers.h"
#include "nn/sequential.h"
#include "ops/ops.h"
#include "session/weights_import.h"
#include "support/check.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "util/error.h"

using plexus::testing::contains;

using namespace plexus;
using namespace plexus::session;
namespace fs = std::filesystem;

namespace {

FileTensor ft(std::string name, Shape shape) { return {std::move(name), std::move(shape), "F32", true}; }

const ImportRow* project_row(const WeightsImportPlan& plan, const std::string& name) {
  for (const ImportRow& r : plan.rows)
    if (r.project_tensor == name) return &r;
  return nullptr;
}

const ImportRow* file_row(const WeightsImportPlan& plan, const std::string& name) {
  for (const ImportRow& r : plan.rows)
    if (r.file_tensor == name) return &r;
  return nullptr;
}

// LeNet as the example project has it: conv1, conv2, fc1, fc2.
std::vector<ExpectedTensor> lenet() {
  return {{"conv1.weight", {20, 1, 5, 5}, "conv1"},  {"conv1.bias", {20}, "conv1"},
          {"conv2.weight", {50, 20, 5, 5}, "conv2"}, {"conv2.bias", {50}, "conv2"},
          {"fc1.weight", {500, 800}, "fc1"},         {"fc1.bias", {500}, "fc1"},
          {"fc2.weight", {10, 500}, "fc2"},          {"fc2.bias", {10}, "fc2"}};
}

// A graph of these nodes (id, name) and edges (from, to), ports left out: the order is all
// expected_tensors reads of it.
graph::Graph graph_of(const std::vector<std::pair<std::string, std::string>>& nodes,
                      const std::vector<std::pair<std::string, std::string>>& edges = {}) {
  graph::Graph g;
  for (const auto& [id, name] : nodes) {
    graph::Node n;
    n.id = id;
    n.name = name;
    g.nodes.push_back(n);
  }
  for (const auto& [from, to] : edges) g.edges.push_back({{from, "output"}, {to, "input"}});
  return g;
}

}  // namespace

TEST(projectTensorsComeDepthFirstAsCodeRegistersThem) {
  // in -> a -> b -> add, and in -> proj -> add (a residual block): the compiler registers a,
  // proj, b (breadth first); PyTorch code registers a, b, then the shortcut.
  nn::Sequential model;
  for (const char* id : {"a", "proj", "b"}) model.add(id, std::make_shared<nn::Linear>(2, 2, false));
  const graph::Graph g = graph_of({{"in", ""}, {"a", "A"}, {"b", ""}, {"add", ""}, {"proj", ""}},
                                  {{"in", "a"}, {"in", "proj"}, {"a", "b"}, {"b", "add"}, {"proj", "add"}});
  const std::vector<ExpectedTensor> expected = expected_tensors(model, g);
  COMPARE(expected.size(), size_t(3));
  COMPARE(expected[0].name, std::string("a.weight"));
  COMPARE(expected[0].node_name, std::string("A"));
  COMPARE(expected[1].name, std::string("b.weight"));
  COMPARE(expected[2].name, std::string("proj.weight"));
}

TEST(exactNamesMatch) {
  std::vector<FileTensor> file;
  for (const ExpectedTensor& e : lenet()) file.push_back(ft(e.name, e.shape));
  std::swap(file[0], file[7]);  // order does not matter to names
  const WeightsImportPlan plan = match_weights(lenet(), file);
  COMPARE(plan.count(ImportStatus::Matched), int64_t(8));
  VERIFY(plan.complete());
  for (const ImportRow& r : plan.rows) {
    COMPARE(r.by, MatchedBy::Exact);
    COMPARE(r.file_tensor, r.project_tensor);
  }
}

TEST(pytorchModulePathsMapOntoNodeIdsAndNames) {
  // A wrapped model ("model.", DataParallel's "module.") and a node named unlike its id.
  std::vector<ExpectedTensor> project = lenet();
  for (ExpectedTensor& e : project)
    if (e.name.starts_with("fc1.")) e.node_name = "Hidden Layer";
  const std::vector<FileTensor> file{ft("module.encoder.conv1.weight", {20, 1, 5, 5}),
                                     ft("module.encoder.conv1.bias", {20}),
                                     ft("model.conv2.weight", {50, 20, 5, 5}),
                                     ft("model.conv2.bias", {50}),
                                     ft("head.hidden_layer.weight", {500, 800}),
                                     ft("head.hidden_layer.bias", {500}),
                                     ft("FC2.weight", {10, 500}),
                                     ft("FC2.bias", {10})};
  const WeightsImportPlan plan = match_weights(project, file);
  VERIFY2(plan.complete(), plan.text());
  COMPARE(project_row(plan, "conv1.weight")->file_tensor, std::string("module.encoder.conv1.weight"));
  COMPARE(project_row(plan, "fc1.weight")->file_tensor, std::string("head.hidden_layer.weight"));
  COMPARE(project_row(plan, "fc2.bias")->file_tensor, std::string("FC2.bias"));
  for (const ImportRow& r : plan.rows) COMPARE(r.by, MatchedBy::Name);
}

TEST(longestNodeKeyWinsAndSegmentsMustMatchWhole) {
  // "block_fc1" must not take "fc1"'s tensor, nor "c1" the tensor of "abc1" (of another rank, so
  // not a shape mismatch by order either).
  const std::vector<ExpectedTensor> project{
      {"fc1.weight", {2, 2}, ""}, {"block_fc1.weight", {2, 2}, ""}, {"c1.weight", {3}, ""}};
  const std::vector<FileTensor> file{ft("net.block.fc1.weight", {2, 2}), ft("net.fc1.weight", {2, 2}),
                                     ft("abc1.weight", {4, 4})};
  const WeightsImportPlan plan = match_weights(project, file);
  COMPARE(project_row(plan, "block_fc1.weight")->file_tensor, std::string("net.block.fc1.weight"));
  COMPARE(project_row(plan, "block_fc1.weight")->by, MatchedBy::Name);
  COMPARE(project_row(plan, "fc1.weight")->file_tensor, std::string("net.fc1.weight"));
  COMPARE(project_row(plan, "c1.weight")->status, ImportStatus::Missing);
  COMPARE(file_row(plan, "abc1.weight")->status, ImportStatus::LeftOut);
}

TEST(sequentialIndicesFallBackToOrderAndShape) {
  // nn.Sequential(Conv2d, ReLU, MaxPool2d, Conv2d, ReLU, MaxPool2d, Flatten, Linear, ReLU, Linear).
  const std::vector<FileTensor> file{
      ft("0.weight", {20, 1, 5, 5}), ft("0.bias", {20}),  ft("3.weight", {50, 20, 5, 5}), ft("3.bias", {50}),
      ft("7.weight", {500, 800}),    ft("7.bias", {500}), ft("9.weight", {10, 500}),      ft("9.bias", {10})};
  const WeightsImportPlan plan = match_weights(lenet(), file);
  VERIFY2(plan.complete(), plan.text());
  const std::vector<std::string> expected_from{"0.weight", "0.bias", "3.weight", "3.bias",
                                               "7.weight", "7.bias", "9.weight", "9.bias"};
  for (size_t i = 0; i < expected_from.size(); ++i) {
    COMPARE(plan.rows[i].file_tensor, expected_from[i]);
    COMPARE(plan.rows[i].by, MatchedBy::Order);
  }
}

TEST(aHeaderSortedByNameIsPutBackInStateDictOrder) {
  // The safetensors package sorts its header: "10" before "2", bias before weight. Such a file
  // is ordered as a state_dict would be, numbers as numbers and weight, bias, running
  // statistics, then an LSTM's tensors by layer, within a module.
  const std::vector<ExpectedTensor> project{{"conv.weight", {4, 1, 3, 3}, ""},
                                            {"conv.bias", {4}, ""},
                                            {"bn.weight", {4}, ""},
                                            {"bn.bias", {4}, ""},
                                            {"bn.running_mean", {4}, ""},
                                            {"bn.running_var", {4}, ""},
                                            {"rnn.weight_ih_l0", {8, 4}, ""},
                                            {"rnn.weight_hh_l0", {8, 2}, ""},
                                            {"rnn.bias_ih_l0", {8}, ""},
                                            {"rnn.bias_hh_l0", {8}, ""},
                                            {"rnn.weight_ih_l1", {8, 2}, ""},
                                            {"rnn.weight_hh_l1", {8, 2}, ""},
                                            {"rnn.bias_ih_l1", {8}, ""},
                                            {"rnn.bias_hh_l1", {8}, ""},
                                            {"fc.weight", {4, 4}, ""},
                                            {"fc.bias", {4}, ""}};
  const std::vector<std::string> torch{"0.weight",       "0.bias",        "1.weight",       "1.bias",
                                       "1.running_mean", "1.running_var", "2.weight_ih_l0", "2.weight_hh_l0",
                                       "2.bias_ih_l0",   "2.bias_hh_l0",  "2.weight_ih_l1", "2.weight_hh_l1",
                                       "2.bias_ih_l1",   "2.bias_hh_l1",  "10.weight",      "10.bias"};
  std::vector<FileTensor> file;
  for (size_t i = 0; i < torch.size(); ++i) file.push_back(ft(torch[i], project[i].shape));
  std::sort(file.begin(), file.end(), [](const FileTensor& a, const FileTensor& b) { return a.name < b.name; });
  const WeightsImportPlan plan = match_weights(project, file);
  VERIFY2(plan.complete(), plan.text());
  for (size_t i = 0; i < torch.size(); ++i) {
    COMPARE(plan.rows[i].file_tensor, torch[i]);
    COMPARE(plan.rows[i].by, MatchedBy::Order);
  }
}

TEST(orderKeepsBothOrdersAndPrefersTheSameParameterName) {
  // Two tensors of shape [4]: a bias and a BatchNorm's weight. The file lists an extra
  // [4] tensor first; the alignment must skip it, not shift every match by one.
  const std::vector<ExpectedTensor> project{{"bn.weight", {4}, ""}, {"bn.bias", {4}, ""}, {"fc.weight", {2, 4}, ""}};
  const std::vector<FileTensor> file{ft("extra.scale", {4}), ft("1.weight", {4}), ft("1.bias", {4}),
                                     ft("2.weight", {2, 4})};
  const WeightsImportPlan plan = match_weights(project, file);
  VERIFY2(plan.complete(), plan.text());
  COMPARE(project_row(plan, "bn.weight")->file_tensor, std::string("1.weight"));
  COMPARE(project_row(plan, "bn.bias")->file_tensor, std::string("1.bias"));
  COMPARE(file_row(plan, "extra.scale")->status, ImportStatus::LeftOut);
}

TEST(shapeMismatchesAreReportedNotMatched) {
  // A new number of classes: fc2 is [5, 500] here, [10, 500] in the file, by name and by order.
  std::vector<ExpectedTensor> project = lenet();
  project[6].shape = {5, 500};
  project[7].shape = {5};
  std::vector<FileTensor> named;
  for (const ExpectedTensor& e : lenet()) named.push_back(ft(e.name, e.shape));
  const WeightsImportPlan by_name = match_weights(project, named);
  VERIFY(!by_name.complete());
  COMPARE(by_name.count(ImportStatus::Matched), int64_t(6));
  COMPARE(by_name.count(ImportStatus::ShapeMismatch), int64_t(2));
  const ImportRow* w = project_row(by_name, "fc2.weight");
  COMPARE(w->status, ImportStatus::ShapeMismatch);
  COMPARE(w->expected, (Shape{5, 500}));
  COMPARE(w->got, (Shape{10, 500}));
  VERIFY2(contains(by_name.text(), "fc2.weight -> fc2.weight  expected [5, 500], got [10, 500]"), by_name.text());

  std::vector<FileTensor> indexed;
  for (size_t i = 0; i < named.size(); ++i)
    indexed.push_back(ft("layers." + std::to_string(i / 2) + "." + (i % 2 ? "bias" : "weight"), named[i].shape));
  const WeightsImportPlan by_order = match_weights(project, indexed);
  COMPARE(by_order.count(ImportStatus::Matched), int64_t(6));
  COMPARE(project_row(by_order, "fc2.weight")->status, ImportStatus::ShapeMismatch);
  COMPARE(project_row(by_order, "fc2.weight")->file_tensor, std::string("layers.3.weight"));
  COMPARE(project_row(by_order, "fc2.bias")->status, ImportStatus::ShapeMismatch);
  COMPARE(by_order.count(ImportStatus::LeftOut), int64_t(0));
}

TEST(extraAndMissingTensorsAreListed) {
  const std::vector<ExpectedTensor> project{
      {"fc1.weight", {3, 2}, ""}, {"fc1.bias", {3}, ""}, {"out.weight", {7, 3}, ""}};
  const std::vector<FileTensor> file{ft("fc1.weight", {3, 2}), ft("fc1.bias", {3}), ft("aux.scale", {9, 9})};
  const WeightsImportPlan plan = match_weights(project, file);
  VERIFY(!plan.complete());
  COMPARE(plan.rows.size(), size_t(4));
  COMPARE(plan.rows[2].status, ImportStatus::Missing);
  COMPARE(plan.rows[2].project_tensor, std::string("out.weight"));
  VERIFY(!plan.rows[2].optional);
  COMPARE(plan.rows[3].status, ImportStatus::LeftOut);
  COMPARE(plan.rows[3].file_tensor, std::string("aux.scale"));
  VERIFY2(contains(plan.text(), "2 matched, 0 shape-mismatched, 1 left out, 1 missing"), plan.text());
  VERIFY2(contains(plan.json(), R"("status": "missing")") && contains(plan.json(), R"("complete": false)"),
          plan.json());
}

TEST(batchNormCounterOfTypeI64IsLeftOutAndOptional) {
  const std::vector<ExpectedTensor> project{{"bn.weight", {4}, ""},
                                            {"bn.bias", {4}, ""},
                                            {"bn.running_mean", {4}, ""},
                                            {"bn.running_var", {4}, ""},
                                            {"bn.num_batches_tracked", {}, ""}};
  const std::vector<FileTensor> file{ft("features.1.weight", {4}),
                                     ft("features.1.bias", {4}),
                                     ft("features.1.running_mean", {4}),
                                     ft("features.1.running_var", {4}),
                                     {"features.1.num_batches_tracked", {}, "I64", false}};
  const WeightsImportPlan plan = match_weights(project, file);
  VERIFY2(plan.complete(), plan.text());
  COMPARE(project_row(plan, "bn.running_var")->file_tensor, std::string("features.1.running_var"));
  const ImportRow* counter = project_row(plan, "bn.num_batches_tracked");
  COMPARE(counter->status, ImportStatus::Missing);
  VERIFY(counter->optional);
  const ImportRow* left = file_row(plan, "features.1.num_batches_tracked");
  COMPARE(left->status, ImportStatus::LeftOut);
  VERIFY2(contains(left->note, "dtype I64 is not loaded"), left->note);
}

TEST(lstmTensorsKeepPytorchNamesLayoutsAndGateOrder) {
  // Plexus's LSTM registers PyTorch's tensors in PyTorch's order and shapes (gates i, f, g, o
  // stacked on dim 0): a torch.nn.LSTM's state dict maps by name, one for one, unconverted.
  Generator gen(3);
  const auto lstm_module = std::make_shared<nn::LSTM>(5, nn::RecurrentOptions{7, 2, true, 0.f}, &gen);
  const nn::LSTM& lstm = *lstm_module;
  nn::Sequential model;
  model.add("lstm", lstm_module);
  const std::vector<ExpectedTensor> project = expected_tensors(model, graph_of({{"lstm", "LSTM"}}));
  std::vector<std::string> names;
  for (const auto& [name, t] : lstm.state()) names.push_back(name);
  const std::vector<std::string> torch_names{
      "weight_ih_l0",         "weight_hh_l0",         "bias_ih_l0",         "bias_hh_l0",
      "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse",
      "weight_ih_l1",         "weight_hh_l1",         "bias_ih_l1",         "bias_hh_l1",
      "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"};
  COMPARE(names, torch_names);
  COMPARE(lstm.state()[0].second.shape(), (Shape{28, 5}));   // 4 gates x 7, input 5
  COMPARE(lstm.state()[8].second.shape(), (Shape{28, 14}));  // layer 1 reads both directions
  // By name under a wrapper's path, and by order under a module name of its own.
  for (const auto& [prefix, how] : {std::pair{"model.lstm.", MatchedBy::Name}, std::pair{"rnn.", MatchedBy::Order}}) {
    std::vector<FileTensor> file;
    for (const auto& [name, t] : lstm.state()) file.push_back(ft(prefix + name, t.shape()));
    const WeightsImportPlan plan = match_weights(project, file);
    VERIFY2(plan.complete(), plan.text());
    for (size_t i = 0; i < torch_names.size(); ++i) {
      COMPARE(plan.rows[i].project_tensor, "lstm." + torch_names[i]);
      COMPARE(plan.rows[i].file_tensor, prefix + torch_names[i]);
      COMPARE(plan.rows[i].by, how);
    }
  }
}

TEST(applyCopiesOnlyWhatMatched) {
  // Through a file: fc2 is [4, 2] here, [5, 2] there.
  nn::Sequential model;
  Generator gen(1);
  model.add("fc1", std::make_shared<nn::Linear>(3, 2, true, &gen));
  model.add("fc2", std::make_shared<nn::Linear>(2, 4, true, &gen));
  const Tensor fc2_before = model.state()[2].second.clone();
  const Tensor w = from_vector({1, 2, 3, 4, 5, 6}, {2, 3}), b = from_vector({7, 8}, {2});
  const Tensor wrong = zeros({5, 2});
  plexus::testing::TempDir dir;
  const fs::path file = dir.path() / "torch.safetensors";
  io::save_safetensors(file, {{"0.weight", w}, {"0.bias", b}, {"1.weight", wrong}});
  const ForeignWeights foreign = read_foreign_weights(file);
  COMPARE(foreign.tensors.size(), size_t(3));
  const WeightsImportPlan plan =
      match_weights(expected_tensors(model, graph_of({{"fc1", ""}, {"fc2", ""}})), foreign.tensors);
  COMPARE(project_row(plan, "fc1.weight")->file_tensor, std::string("0.weight"));
  COMPARE(project_row(plan, "fc1.bias")->file_tensor, std::string("0.bias"));
  COMPARE(project_row(plan, "fc2.weight")->status, ImportStatus::ShapeMismatch);
  COMPARE(apply_import(plan, foreign, model), int64_t(2));
  COMPARE(model.state()[0].second.to_vector(), w.to_vector());
  COMPARE(model.state()[1].second.to_vector(), b.to_vector());
  COMPARE(model.state()[2].second.to_vector(), fc2_before.to_vector());
}
