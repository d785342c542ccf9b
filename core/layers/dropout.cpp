// The dropout layers: noise while training, nothing in evaluation.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"

namespace plexus::layers {
namespace {
struct DropoutParams {
  double p;
};
}  // namespace

void add_dropout_layers(Registrar& r) {
  using P = DropoutParams;
  Layer<P> t;
  t.name = "Dropout";
  t.category = "Layers";
  t.display_name = "Dropout";
  t.description = "Zeroes values at random while training (rate p); passes everything in evaluation.";
  t.inputs = {{"input", "any shape"}};
  t.outputs = {{"output", "the input's shape"}};
  t.params = {graph::param("p", "Drop probability", &P::p, 0.5, 0, 0.99,
                           "The probability of zeroing each value while training.")};
  t.shape = same_shape;
  t.build = [](const BuildContext&, const P& p) { return single(std::make_shared<nn::Dropout>(float(p.p))); };
  t.onnx = onnx_op("Identity");  // evaluation passes everything
  r.add(std::move(t));
}

}  // namespace plexus::layers
