// The dropout layers: noise while training, nothing in evaluation.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"

namespace plexus::layers {
namespace {

struct DropoutParams {
  double p;
};

// Dropout of elements, or (Dropout2d) of whole channels of [N, C, H, W].
void add_dropout(Registrar& r, bool channels) {
  using P = DropoutParams;
  Layer<P> t;
  t.name = channels ? "Dropout2d" : "Dropout";
  t.category = "Layers";
  t.display_name = channels ? "Channel dropout (images)" : "Dropout";
  t.description = channels ? "Zeroes whole channels of each example at random while training (rate p), scaling the "
                             "others by 1/(1-p); passes everything in evaluation. Takes [N, C, H, W] only."
                           : "Zeroes values at random while training (rate p); passes everything in evaluation.";
  t.inputs = {{"input", channels ? "[N, C, H, W]" : "any shape"}};
  t.outputs = {{"output", "the input's shape"}};
  t.params = {graph::param("p", "Drop probability", &P::p, 0.5, 0, 0.99,
                           channels ? "The probability of zeroing each channel of each example while training."
                                    : "The probability of zeroing each value while training.")};
  if (channels)
    t.shape = [](const graph::ShapeContext& c, const P&) -> std::vector<Shape> {
      require_rank(c, 3, "[N, C, H, W]");
      return {one_input(c)};
    };
  else
    t.shape = same_shape;
  t.build = [channels](const BuildContext&, const P& p) {
    return single(channels ? std::shared_ptr<nn::Module>(std::make_shared<nn::Dropout2d>(float(p.p)))
                           : std::make_shared<nn::Dropout>(float(p.p)));
  };
  t.onnx = onnx_op("Identity");  // evaluation passes everything
  t.pytorch = [channels](const CodeContext& c, const P& p) {  // off once the model is in eval()
    module_call(c, std::string(channels ? "nn.Dropout2d(" : "nn.Dropout(") + py(p.p) + ")");
  };
  t.cpp = [channels](const CodeContext& c, const P& p) {
    module_call(c, std::string(channels ? "nn::Dropout2d(" : "nn::Dropout(") + cpp(p.p) + ")");
  };
  r.add(std::move(t));
}

}  // namespace

void add_dropout_layers(Registrar& r) {
  add_dropout(r, /*channels=*/false);
  add_dropout(r, /*channels=*/true);
}

}  // namespace plexus::layers
