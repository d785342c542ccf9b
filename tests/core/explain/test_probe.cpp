// Probes of a trained model (explain/probe.h): every node's output for one input, a node's output
// for a batch, a convolution's filters, the picture-shaped and attention nodes.
#include "core/explain/explain_fixture.h"
#include "explain/probe.h"
#include "nn/conv.h"
#include "ops/ops.h"
#include "support/check.h"
#include "support/test_support.h"
#include "util/error.h"

using namespace plexus;
using plexus::testing::digit;
using plexus::testing::message_of;

TEST(probeGivesEveryNodesOutputInPlanOrder) {
  session::TrainedModel m = testing::example_model("mnist_lenet");
  const std::vector<explain::NodeOutput> out = explain::probe(m, digit(3));
  std::vector<std::string> nodes;
  for (const auto& n : out) nodes.push_back(n.node);
  COMPARE(nodes, (std::vector<std::string>{"conv1", "relu1", "pool1", "conv2", "relu2", "pool2", "flat", "fc1", "relu3",
                                           "fc2"}));
  COMPARE(out[0].value.shape(), (Shape{20, 24, 24}));
  COMPARE(out[5].value.shape(), (Shape{50, 4, 4}));
  COMPARE(out.back().value.shape(), (Shape{10}));
  // The last node's output is the model's prediction; the ReLU's is its input clipped at 0.
  const std::vector<float> logits = m.forward(digit(3).unsqueeze(0)).to_vector(), probed = out.back().value.to_vector();
  for (size_t i = 0; i < logits.size(); ++i) VERIFY(std::abs(logits[i] - probed[i]) < 1e-5f);
  COMPARE(relu(out[0].value).to_vector(), out[1].value.to_vector());
}

TEST(probeRestoresTheModelsObserverAndMode) {
  session::TrainedModel m = testing::example_model("mnist_lenet");
  int observed = 0;
  m.compiled.model->set_observer([&observed](const std::string&, const Tensor&) { ++observed; });
  m.compiled.model->train();
  explain::probe(m, digit(1));
  COMPARE(observed, 0);  // the probe's own observer ran instead
  VERIFY(m.compiled.model->is_training());
  (*m.compiled.model)(zeros({1, 1, 28, 28}));
  COMPARE(observed, 10);
}

TEST(nodeOutputOfABatchIsEachExamplesProbe) {
  session::TrainedModel m = testing::example_model("mnist_lenet");
  const Tensor batch = concat({digit(1).unsqueeze(0), digit(2).unsqueeze(0)}, 0);
  const Tensor conv2 = explain::node_output(m, batch, "conv2");
  COMPARE(conv2.shape(), (Shape{2, 50, 8, 8}));
  const std::vector<float> second = conv2.narrow(0, 1, 1).to_vector();
  const std::vector<float> alone = explain::probe(m, digit(2))[3].value.to_vector();
  for (size_t i = 0; i < alone.size(); ++i) VERIFY(std::abs(second[i] - alone[i]) < 1e-4f);
  VERIFY_CONTAINS(message_of<ValueError>([&] { explain::node_output(m, batch, "conv9"); }),
                  "the model has no node 'conv9' (its nodes: conv1, relu1");
  VERIFY_CONTAINS(message_of<ShapeError>([&] {
                    explain::node_output(m, zeros({2, 28, 28}), "conv2");
                  }),
                  "the model takes inputs [N, 1, 28, 28], got shape [2, 28, 28]");
  VERIFY_CONTAINS(message_of<ShapeError>([&] {
                    explain::probe(m, zeros({28, 28}));
                  }),
                  "the model takes one example of shape [1, 28, 28], got shape [28, 28]");
}

TEST(convFiltersAreACopyOfTheWeights) {
  session::TrainedModel m = testing::example_model("mnist_lenet");
  const Tensor filters = explain::conv_filters(m, "conv1");
  COMPARE(filters.shape(), (Shape{20, 1, 5, 5}));
  const auto& conv = dynamic_cast<const nn::Conv2d&>(*m.compiled.model->children()[0].second);
  COMPARE(filters.to_vector(), conv.weight.to_vector());
  VERIFY(!filters.is_same(conv.weight));
  VERIFY_CONTAINS(message_of<ValueError>([&] { explain::conv_filters(m, "fc1"); }),
                  "node 'fc1' (Linear) is not a Conv2d: it has no filters");
  VERIFY_CONTAINS(message_of<ValueError>([&] { explain::conv_filters(m, "nope"); }), "the model has no node 'nope'");
}

TEST(pictureAndAttentionNodes) {
  const session::TrainedModel lenet = testing::example_model("mnist_lenet");
  COMPARE(explain::picture_nodes(lenet),
          (std::vector<std::string>{"conv1", "relu1", "pool1", "conv2", "relu2", "pool2"}));
  COMPARE(explain::attention_nodes(lenet), std::vector<std::string>{});
  COMPARE(explain::picture_nodes(testing::example_model("mnist_mlp")), std::vector<std::string>{});
}

TEST(attentionMapRowsAreCausalSoftmaxes) {
  const session::TrainedModel m = testing::names_transformer();
  COMPARE(explain::attention_nodes(m), (std::vector<std::string>{"attn1", "attn2"}));
  const explain::AttentionMap a = explain::attention_map(m, std::string("maria"), "attn2");
  COMPARE(a.weights.shape(), (Shape{4, 5, 5}));
  COMPARE(a.tokens, (std::vector<std::string>{"m", "a", "r", "i", "a"}));
  COMPARE(a.query.shape(), (Shape{5, 64}));
  const std::vector<float> w = a.weights.to_vector();
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t t = 0; t < 5; ++t) {
      float sum = 0;
      for (int64_t s = 0; s < 5; ++s) {
        const float v = w[size_t((h * 5 + t) * 5 + s)];
        if (s > t) VERIFY2(v == 0, testing::cat("head ", h, " query ", t, " sees the later key ", s));
        sum += v;
      }
      VERIFY(std::abs(sum - 1) < 1e-5f);
    }
  // The first query sees only itself.
  COMPARE(w[0], 1.f);
  // A longer text keeps its last 32 characters, the model's context.
  COMPARE(explain::attention_map(m, std::string(40, 'a') + "bc", "attn1").weights.shape(), (Shape{4, 32, 32}));
  VERIFY_CONTAINS(message_of<ValueError>([&] { explain::attention_map(m, std::string("maria"), "embed"); }),
                  "node 'embed' (Embedding) is not a MultiheadAttention");
  VERIFY_CONTAINS(message_of<ValueError>([&] { explain::attention_map(m, std::string("ma%ia"), "attn1"); }), "%");
  VERIFY_CONTAINS(message_of<ShapeError>([&] { explain::attention_map(m, zeros({33}), "attn1"); }),
                  "the model takes one example of shape [32] (or shorter), got shape [33]");
}

TEST(textInputOfAModelThatReadsNoText) {
  VERIFY_CONTAINS(message_of<ValueError>([&] { explain::text_input(testing::example_model("mnist_mlp"), "7"); }),
                  "typed text is for a model of a text: this model's dataset is 'mnist'");
}
