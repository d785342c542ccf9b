// Where Grad-CAM's cells look (explain/receptive_field.h) and how its map is placed there (explain/resize.h).
#include <filesystem>
#include <map>

#include "explain/receptive_field.h"
#include "explain/resize.h"
#include "graph/project.h"
#include "ops/ops.h"
#include "support/check.h"
#include "support/test_support.h"
#include "util/error.h"

using namespace plexus;
using explain::AxisPlacement;
using explain::Placement;

namespace {

graph::Node node(const std::string& id, const std::string& type, std::map<std::string, graph::ParamValue> params = {}) {
  graph::Node n;
  n.id = id;
  n.type = type;
  n.params = std::move(params);
  return n;
}

// A chain Input → nodes... with each node's params; ids as given.
graph::Graph chain(const std::vector<graph::Node>& nodes) {
  graph::Graph g;
  g.nodes.push_back(node("in", "Input"));
  std::string previous = "in";
  for (const graph::Node& n : nodes) {
    g.nodes.push_back(n);
    g.edges.push_back({{previous, previous == "in" ? "x" : "output"}, {n.id, "input"}});
    previous = n.id;
  }
  return g;
}

bool same(const Placement& a, double oy, double sy, double ox, double sx) { return a == Placement{{oy, sy}, {ox, sx}}; }

}  // namespace

// LeNet's unpadded 5x5 convolutions and 2x2 poolings: conv1's 24 cells centred on pixels 2 to 25,
// pool1's on 2.5 + 2j, conv2's on 6.5 + 2j (6.5 to 20.5), pool2's on 7.5 + 4j (7.5 to 19.5); the
// ReLUs keep them.
TEST(lenetsCellsLookAtThePicturesMiddle) {
  const graph::Graph g =
      graph::load_project(std::filesystem::path(PLEXUS_SOURCE_DIR) / "examples" / "mnist_lenet.plexus");
  VERIFY(same(explain::cell_placement(g, "in").value(), 0, 1, 0, 1));
  VERIFY(same(explain::cell_placement(g, "conv1").value(), 2, 1, 2, 1));
  VERIFY(same(explain::cell_placement(g, "relu1").value(), 2, 1, 2, 1));
  VERIFY(same(explain::cell_placement(g, "pool1").value(), 2.5, 2, 2.5, 2));
  VERIFY(same(explain::cell_placement(g, "conv2").value(), 6.5, 2, 6.5, 2));
  VERIFY(same(explain::cell_placement(g, "pool2").value(), 7.5, 4, 7.5, 4));
  VERIFY(!explain::cell_placement(g, "flat"));  // a reshape: no cells to place
  VERIFY(!explain::cell_placement(g, "conv7"));
}

// Padding moves the centres back, stride and dilation scale them, per axis; "same" pads
// dilation · (kernel - 1) / 2 before; a pooling's stride 0 is its kernel.
TEST(paddingStrideAndDilationPlaceTheCells) {
  const graph::Graph g = chain(
      {node("c", "Conv2d",
            {{"kernel_size", int64_t(3)}, {"padding", int64_t(1)}, {"stride", std::vector<int64_t>{2, 1}}}),
       node("p", "AvgPool2d", {{"kernel_size", int64_t(3)}}),
       node("d", "Conv2d", {{"kernel_size", int64_t(3)}, {"dilation", int64_t(2)}, {"padding", std::string("same")}})});
  VERIFY(same(explain::cell_placement(g, "c").value(), 0, 2, 0, 1));  // centre j·s + (k-1)/2 - p
  VERIFY(same(explain::cell_placement(g, "p").value(), 2, 6, 1, 3));
  VERIFY(same(explain::cell_placement(g, "d").value(), 2, 6, 1, 3));  // "same" keeps them where they were
}

// What changes positions in a way that cannot be placed, and merges of differently placed inputs,
// leave the cells unplaced (Grad-CAM stretches the map then); a merge of alike ones keeps them.
TEST(unplaceableCellsFallBack) {
  graph::Graph g =
      chain({node("c", "Conv2d", {{"kernel_size", int64_t(5)}}), node("a", "AdaptiveAvgPool2d"), node("r", "ReLU")});
  VERIFY(explain::cell_placement(g, "c"));
  VERIFY(!explain::cell_placement(g, "a"));
  VERIFY(!explain::cell_placement(g, "r"));
  g.nodes.push_back(node("u", "Upsample"));
  g.edges.push_back({{"c", "output"}, {"u", "input"}});
  VERIFY(!explain::cell_placement(g, "u"));
  // c (offset 2) + in (offset 0): disagree; c + ReLU(c): agree.
  g.nodes.push_back(node("skip", "Add"));
  g.edges.push_back({{"c", "output"}, {"skip", "inputs"}});
  g.edges.push_back({{"in", "x"}, {"skip", "inputs"}});
  VERIFY(!explain::cell_placement(g, "skip"));
  g.nodes.push_back(node("rc", "ReLU"));
  g.edges.push_back({{"c", "output"}, {"rc", "input"}});
  g.nodes.push_back(node("sum", "Add"));
  g.edges.push_back({{"c", "output"}, {"sum", "inputs"}});
  g.edges.push_back({{"rc", "output"}, {"sum", "inputs"}});
  VERIFY(same(explain::cell_placement(g, "sum").value(), 2, 1, 2, 1));
}

// A placed map: each cell's value at its centre, interpolated between centres, the edge cells'
// beyond them; stretched placement is F.interpolate(align_corners=False)'s.
TEST(placedMapsSampleTheCellsAtTheirCentres) {
  const Tensor map = from_vector({0, 4, 8, 12}, {2, 2});  // rows 0 4 / 8 12
  const std::vector<float> heat = explain::place_bilinear(map, 1, 8, {{0, 1}, {2, 4}}).to_vector();
  COMPARE(heat, (std::vector<float>{0, 0, 0, 1, 2, 3, 4, 4}));  // centres at x = 2 and 6
  const Tensor column = from_vector({0, 4}, {2, 1});
  COMPARE(explain::place_bilinear(column, 4, 1, {explain::stretched(2, 4), explain::stretched(1, 1)}).to_vector(),
          (std::vector<float>{0, 1, 3, 4}));  // F.interpolate([0, 4] → 4): 0, 1, 3, 4
  VERIFY_THROWS(ShapeError, explain::place_bilinear(from_vector({1, 2}, {2}), 4, 4, {}));
}
