// The Data family: the Input node, where the bound dataset's examples enter the graph.
#include "layers/families.h"
#include "layers/shape_rules.h"

namespace plexus::layers {
namespace {
struct InputParams {
  std::vector<int64_t> shape;
};
}  // namespace

void add_data_layers(Registrar& r) {
  Layer<InputParams> t;
  t.name = "Input";
  t.category = "Data";
  t.display_name = "Input";
  t.description = "The examples of the bound dataset: inputs x and labels y.";
  t.outputs = {{"x", "one example's input, e.g. [N, 1, 28, 28] for MNIST"}, {"y", "its label"}};
  t.params = {graph::param("shape", "Input shape", &InputParams::shape, {}, 1, graph::kBig,
                           "The shape of one example; empty = taken from the dataset.")};
  t.shape = [](const graph::ShapeContext& c, const InputParams& p) -> std::vector<Shape> {
    const std::vector<int64_t>& fixed = p.shape;
    if (!c.dataset && fixed.empty()) {
      if (c.dataset_bound) throw graph::ShapeUnknown{};  // the caller reports why it cannot be read
      fail("", c.node.label() + " has no shape: bind a dataset in the training settings or set its shape");
    }
    const Shape x = fixed.empty() ? c.dataset->input_shape : Shape(fixed.begin(), fixed.end());
    if (c.dataset && !fixed.empty() && x != c.dataset->input_shape)
      fail("", c.node.label() + " is set to shape " + batched(x) + " but the dataset gives " +
                   batched(c.dataset->input_shape) + " (clear its shape to take the dataset's)");
    return {x, c.dataset ? c.dataset->label_shape : Shape{}};
  };
  t.build = [](const BuildContext&, const InputParams&) { return BuiltNode{}; };
  // The model's input x in raw units, standardised as the run's loaders did:
  // (x - mean) * (1 / std) per channel (data::Normalize). An exported model has no labels y.
  t.onnx = [](const OnnxContext& c, const InputParams&) {
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
  r.add(std::move(t));
}

}  // namespace plexus::layers
