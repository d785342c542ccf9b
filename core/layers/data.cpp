// The Data family: the Input node, where the bound dataset's examples enter the graph. Its
// parameters are graph/inputs.h's, which the validator, the loaders and the export read too.
#include <algorithm>

#include "graph/inputs.h"
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "util/text.h"

namespace plexus::layers {
namespace {
// The positions of `columns` among the table's feature columns; fails on the node naming a
// column the dataset lacks.
std::vector<int64_t> column_positions(const graph::ShapeContext& c, const std::vector<std::string>& columns) {
  const std::vector<std::string>& names = c.dataset->feature_names;
  if (names.empty())
    fail("", c.node.label() + " reads columns " + join(columns) +
                 ", but its dataset has no named columns: only a table's (CSV) columns can be chosen");
  std::vector<int64_t> at;
  for (const std::string& column : columns) {
    const auto it = std::find(names.begin(), names.end(), column);
    if (it == names.end())
      fail("", c.node.label() + " reads column '" + column + "', which is not among the dataset's feature columns (" +
                   join(names) + ")");
    at.push_back(int64_t(it - names.begin()));
  }
  return at;
}

}  // namespace

std::vector<int64_t> input_columns(const graph::InputRead& input, const graph::DatasetInfo& dataset) {
  if (input.columns.empty()) return {};
  return column_positions(graph::ShapeContext{*input.node, {}, {}, {}, &dataset, true}, input.columns);
}

void add_data_layers(Registrar& r) {
  Layer<graph::InputParams> t;
  t.name = "Input";
  t.category = "Data";
  t.display_name = "Input";
  t.description =
      "The examples of the bound dataset: inputs x and labels y. Several Inputs may read a table's columns apart, "
      "e.g. its measurements into one branch and a category's indices into an Embedding.";
  t.outputs = {{"x", "one example's input, e.g. [N, 1, 28, 28] for MNIST"}, {"y", "its label"}};
  t.params = graph::input_fields();
  t.shape = [](const graph::ShapeContext& c, const graph::InputParams& p) -> std::vector<Shape> {
    const std::vector<int64_t>& fixed = p.shape;
    const Shape label = c.dataset ? c.dataset->label_shape : Shape{};
    if (!p.columns.empty()) {
      const Shape x{int64_t(p.columns.size())};
      if (!fixed.empty() && Shape(fixed.begin(), fixed.end()) != x)
        fail("", c.node.label() + " is set to shape " + batched(Shape(fixed.begin(), fixed.end())) + " but reads " +
                     std::to_string(p.columns.size()) + " columns: " + batched(x));
      if (c.dataset) column_positions(c, p.columns);
      return {x, label};
    }
    if (!c.dataset && fixed.empty()) {
      if (c.dataset_bound) throw graph::ShapeUnknown{};  // the caller reports why it cannot be read
      fail("", c.node.label() + " has no shape: bind a dataset in the training settings or set its shape");
    }
    const Shape x = fixed.empty() ? c.dataset->input_shape : Shape(fixed.begin(), fixed.end());
    if (c.dataset && !fixed.empty() && x != c.dataset->input_shape)
      fail("", c.node.label() + " is set to shape " + batched(x) + " but the dataset gives " +
                   batched(c.dataset->input_shape) + " (clear its shape to take the dataset's)");
    return {x, label};
  };
  t.build = [](const BuildContext&, const graph::InputParams&) { return BuiltNode{}; };
  // The model's input x in raw units, standardised as the run's loaders did:
  // (x - mean) * (1 / std) per channel (data::Normalize). An exported model has no labels y.
  t.onnx = [](const OnnxContext& c, const graph::InputParams&) {
    const std::vector<float>& mean = c.input_mean, &deviation = c.input_std;
    if (mean.empty()) return c.out.add_node("Identity", c.input_names, {c.output_names[0]});
    const Shape& x = c.outputs[0];
    if (deviation.size() != mean.size() || (mean.size() > 1 && (x.empty() || x[0] != int64_t(mean.size()))))
      throw OnnxUnsupported{"its input standardisation has " + std::to_string(mean.size()) + " means and " +
                            std::to_string(deviation.size()) + " standard deviations, but the input " + batched(x) +
                            " needs one of each, or one per channel (dim 1)"};
    Shape per_channel(x.size() + 1, 1);  // [1, C, 1, 1] or [1, F]: broadcast over dim 1
    if (!x.empty()) per_channel[1] = int64_t(mean.size());
    std::vector<float> inv_std;
    for (float s : deviation) inv_std.push_back(1.f / s);
    c.out.add_initializer(c.name("mean"), from_vector(mean, per_channel));
    c.out.add_initializer(c.name("inv_std"), from_vector(inv_std, per_channel));
    c.out.add_node("Sub", {c.input_names[0], c.name("mean")}, {c.name("centered")});
    c.out.add_node("Mul", {c.name("centered"), c.name("inv_std")}, {c.output_names[0]});
  };
  // The exporter standardises the whole example first (as the run's loaders did); a table's
  // columns are then picked apart.
  t.pytorch = [](const CodeContext& c, const graph::InputParams&) {
    if (c.columns.empty()) return c.assign(c.input());
    std::string at;
    for (int64_t i : c.columns) at += (at.empty() ? "" : ", ") + std::to_string(i);
    c.assign(c.input() + "[:, [" + at + "]]");
  };
  t.cpp = [](const CodeContext& c, const graph::InputParams&) {
    if (c.columns.empty()) return c.assign(c.input());
    std::string at;  // the core's indices are floats holding whole numbers
    for (int64_t i : c.columns) at += (at.empty() ? "" : ", ") + cpp(double(i));
    c.assign("index_select(" + c.input() + ", 1, from_vector({" + at + "}, {" + std::to_string(c.columns.size()) +
             "}))");
  };
  r.add(std::move(t));
}

}  // namespace plexus::layers
