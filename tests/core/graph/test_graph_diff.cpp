// graph::diff of two known graphs lists exactly their differences: nodes added, removed,
// renamed, retyped and with other parameters (the type's defaults filled in), wires, dataset
// and training settings; positions and the view are not differences. describe() and summary()
// say it for people; union_graph() holds both graphs for drawing.
#include "support/check.h"

#include <string>
#include <vector>

#include "graph/diff.h"
#include "graph/project.h"
#include "support/diff_fixture.h"

using namespace plexus;
using namespace plexus::graph;

namespace {

Edge wire(const char* from, const char* from_port, const char* to, const char* to_port) {
  return Edge{{from, from_port}, {to, to_port}};
}

// "name before → after" for every change, to compare whole lists at once.
std::vector<std::string> texts(const std::vector<ParamChange>& changes) {
  std::vector<std::string> out;
  for (const ParamChange& c : changes) out.push_back(c.name + " " + c.before + " → " + c.after);
  return out;
}

// The lines joined by '\n', so that a failing comparison shows both whole.
std::string lines(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "\n" : "") + v[i];
  return out;
}

}  // namespace

TEST(twoKnownGraphsDifferExactlyAsMade) {
  const Graph a = testing::diff_before(), b = testing::diff_after();
  const GraphDiff d = diff(a, b);

  COMPARE(d.added, std::vector<std::string>{"drop2"});
  COMPARE(d.removed, std::vector<std::string>{"drop"});
  // fc2 set bias to its default and flat only moved: neither changed.
  COMPARE(d.changed.size(), size_t(2));
  const NodeChange& fc1 = d.changed[0];
  COMPARE(fc1.id, std::string("fc1"));
  VERIFY(fc1.renamed() && !fc1.retyped());
  COMPARE(fc1.name_before, std::string("fc1"));
  COMPARE(fc1.name_after, std::string("hidden"));
  COMPARE(texts(fc1.params), std::vector<std::string>{"out_features 128 → 64"});
  const NodeChange& act = d.changed[1];
  COMPARE(act.id, std::string("act"));
  VERIFY(act.retyped() && !act.renamed());
  COMPARE(act.type_before, std::string("ReLU"));
  COMPARE(act.type_after, std::string("LeakyReLU"));
  VERIFY(act.params.empty());

  COMPARE(d.edges_added, (std::vector<Edge>{wire("act", "output", "drop2", "input"),
                                            wire("drop2", "output", "fc2", "input")}));
  COMPARE(d.edges_removed, (std::vector<Edge>{wire("act", "output", "drop", "input"),
                                              wire("drop", "output", "fc2", "input")}));
  // height 28 and seed 1 are written out in B but are the defaults A has.
  COMPARE(texts(d.settings), (std::vector<std::string>{"dataset.path data/mnist → data/mnist-copy",
                                                       "dataset.augment.shift 0 → 2",
                                                       "training.optimizer sgd → adam",
                                                       "training.lr 0.1 → 0.01"}));

  VERIFY(!d.same_structure());
  VERIFY(!d.empty());
  VERIFY(d.any_renamed());
  COMPARE(d.change("fc1"), &d.changed[0]);
  COMPARE(d.change("fc2"), nullptr);
  COMPARE(d.change("drop2"), nullptr);
}

TEST(describeSaysEachDifferenceOnce) {
  const Graph a = testing::diff_before(), b = testing::diff_after();
  const std::vector<std::string> expected{
      "added Dropout 'drop2'",
      "removed Dropout 'drop'",
      "'fc1' renamed to 'hidden'",
      "Linear 'hidden': out_features 128 → 64",
      "ReLU 'act' became LeakyReLU 'act'",
      "wire act.output → drop2.input added",
      "wire drop2.output → fc2.input added",
      "wire act.output → drop.input removed",
      "wire drop.output → fc2.input removed",
      "dataset.path data/mnist → data/mnist-copy",
      "dataset.augment.shift 0 → 2",
      "training.optimizer sgd → adam",
      "training.lr 0.1 → 0.01",
  };
  COMPARE(lines(describe(diff(a, b), a, b)), lines(expected));
  COMPARE(summary(diff(a, b)),
          std::string("1 node added, 1 removed, 1 retyped, 1 renamed, 1 parameter changed, 2 wires added, "
                      "2 removed, 4 settings differ"));
}

TEST(aGraphAgainstItselfHasNoDifference) {
  const Graph a = testing::diff_before();
  Graph moved = a;
  moved.nodes[2].position = {1000, 1000};
  moved.view = R"({"zoom":0.5})";
  const GraphDiff d = diff(a, moved);
  VERIFY(d.empty());
  VERIFY(d.same_structure());
  VERIFY(describe(d, a, moved).empty());
  COMPARE(summary(d), std::string("no differences"));
}

TEST(theDirectionOfAComparisonMatters) {
  const Graph a = testing::diff_before(), b = testing::diff_after();
  const GraphDiff back = diff(b, a);
  COMPARE(back.added, std::vector<std::string>{"drop"});
  COMPARE(back.removed, std::vector<std::string>{"drop2"});
  COMPARE(texts(back.changed[0].params), std::vector<std::string>{"out_features 64 → 128"});
  COMPARE(texts(back.settings).back(), std::string("training.lr 0.01 → 0.1"));
}

TEST(aRenameAloneKeepsTheStructure) {
  Graph a = testing::diff_before();
  a.nodes[2].name = "hidden";
  Graph b = a;
  b.nodes[2].name = "";
  const GraphDiff d = diff(a, b);
  VERIFY(d.same_structure());
  VERIFY(!d.empty());
  COMPARE(lines(describe(d, a, b)), std::string("'hidden' renamed to 'fc1'"));  // a node without a name shows its id
  COMPARE(summary(d), std::string("1 node renamed"));
}

// A node's own training settings differ as settings of that node: said like a parameter,
// counted with the settings, and no change of structure (a run may continue with them).
TEST(nodeSettingsAreNoStructure) {
  const Graph a = testing::diff_before();
  Graph b = a;
  b.nodes[2].lr_mult = 0;
  b.nodes[2].weight_decay_mult = 0.5;
  const GraphDiff d = diff(a, b);
  VERIFY(d.same_structure());
  VERIFY(!d.empty());
  VERIFY(d.any_node_settings());
  COMPARE(d.changed.size(), size_t(1));
  VERIFY(d.changed[0].params.empty());
  COMPARE(texts(d.changed[0].settings), (std::vector<std::string>{"lr_mult 1 → 0", "weight_decay_mult 1 → 0.5"}));
  COMPARE(lines(describe(d, a, b)),
          std::string("Linear 'fc1': lr_mult 1 → 0\nLinear 'fc1': weight_decay_mult 1 → 0.5"));
  COMPARE(summary(d), std::string("2 settings differ"));
}

// A whole number written for a real parameter is that real; reals that print alike in six
// digits are printed exactly.
TEST(valuesCompareAsValues) {
  Graph a = testing::diff_before(), b = a;
  a.nodes[3] = {"act", "LeakyReLU", "act", {{"negative_slope", int64_t(0)}}, {}};
  b.nodes[3] = {"act", "LeakyReLU", "act", {{"negative_slope", 0.0}}, {}};
  VERIFY(diff(a, b).empty());

  b.nodes[3].params["negative_slope"] = 0.0100001;
  a.nodes[3].params.clear();  // the default, 0.01
  COMPARE(texts(diff(a, b).changed.at(0).params), std::vector<std::string>{"negative_slope 0.01 → 0.0100001"});
  b.training.lr = 0.1000000001;
  COMPARE(texts(diff(a, b).settings), std::vector<std::string>{"training.lr 0.1 → 0.1000000001"});
}

// A type the registry does not know compares the parameters set; one set in only one graph
// is "default" in the other.
TEST(unknownTypesCompareWhatIsSet) {
  Graph a, b;
  a.nodes = {{"m", "Mystery", "m", {{"k", int64_t(1)}, {"same", true}}, {}}};
  b.nodes = {{"m", "Mystery", "m", {{"k", int64_t(2)}, {"same", true}, {"extra", std::string("x")}}, {}}};
  COMPARE(texts(diff(a, b).changed.at(0).params), (std::vector<std::string>{"extra default → x", "k 1 → 2"}));
}

TEST(datasetBindingKeysAreCompared) {
  Graph a, b;
  a.dataset = {.kind = "csv", .path = "a.csv", .target = "y", .task = "regression", .features = {"u", "v"}};
  b.dataset = {.kind = "csv", .path = "a.csv", .target = "z", .task = "classification", .features = {"u"}};
  COMPARE(texts(diff(a, b).settings), (std::vector<std::string>{"dataset.target y → z",
                                                                "dataset.task regression → classification",
                                                                "dataset.features u, v → u"}));
  b.dataset = a.dataset;
  b.dataset.kind = "image_folder";
  b.dataset.color = "rgb";
  b.training.device = "cuda";
  COMPARE(texts(diff(a, b).settings), (std::vector<std::string>{"dataset.kind csv → image_folder",
                                                                "dataset.color gray → rgb",
                                                                "training.device cpu → cuda"}));
}

TEST(unionGraphHoldsBoth) {
  const Graph a = testing::diff_before(), b = testing::diff_after();
  const Graph u = union_graph(a, b);
  std::vector<std::string> ids;
  for (const Node& n : u.nodes) ids.push_back(n.id);
  COMPARE(ids, (std::vector<std::string>{"in", "flat", "fc1", "act", "drop2", "fc2", "loss", "drop"}));
  COMPARE(u.find("flat")->position, (Position{300, 40}));  // B's place
  COMPARE(u.find("drop")->position, (Position{280, 220}));  // A's place
  COMPARE(u.find("fc1")->name, std::string("hidden"));
  COMPARE(u.edges.size(), b.edges.size() + 2);
  COMPARE(u.edges.back(), wire("drop", "output", "fc2", "input"));
  VERIFY(u.view.empty());
  COMPARE(u.dataset, DatasetBinding{});
}

