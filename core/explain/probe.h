#pragma once
// What a trained model computes inside, for one input: every node's output (feature maps),
// a MultiheadAttention node's attention weights, a convolution's filters. The model runs in
// eval mode without gradients; its weights are not changed.
#include <string>
#include <vector>

#include "session/trained_model.h"
#include "tensor/tensor.h"

namespace plexus::explain {

struct NodeOutput {
  std::string node;  // its id
  Tensor value;      // its first output for the one example: the batch dimension dropped
};

// Every node's first output for one raw example (the input shape, no batch dimension; a text
// file's model takes up to its sequence length), in the order the model runs them. ShapeError
// for an input of the wrong shape.
std::vector<NodeOutput> probe(const session::TrainedModel& model, const Tensor& raw);

// Node `node`'s first output for a batch of raw examples [N, input shape...]: [N, ...].
// ValueError naming an unknown node.
Tensor node_output(const session::TrainedModel& model, const Tensor& raw_batch, const std::string& node);

// The attention weights of MultiheadAttention node `node` for one raw example: [H, T, S], row t
// the softmax over the keys query t attends to (causal and padding masks applied, no dropout),
// with the characters of the input for the axes (a text model's vocabulary; "#k" where there is none).
struct AttentionMap {
  Tensor weights;                   // [H, T, S]
  std::vector<std::string> tokens;  // T labels, one per position
  Tensor query, key;                // the node's inputs they were computed from: [T, E], [S, E]
};
AttentionMap attention_map(const session::TrainedModel& model, const Tensor& raw, const std::string& node);
// The same for typed text, encoded by text_input.
AttentionMap attention_map(const session::TrainedModel& model, const std::string& text, const std::string& node);

// Typed text as the model's raw input, encoded as its training encoded its examples: labelled
// texts with data::encode_typed_text ([T]); a text file's model, the ids of the text's last
// `context` symbols (its sequence length T: it has learnt positions up to there), [t] with t <= T,
// which every function here takes for such a model. ValueError naming a character the
// vocabulary lacks and its position, for empty text, or for a model that does not read text.
Tensor text_input(const session::TrainedModel& model, const std::string& text);

// What input id `id` of a text model stands for: a text file's symbol (its class `id`), labelled
// texts' character (vocabulary[id - 1]; "·" for the padding id 0), else "#id".
std::string input_symbol(const session::TrainedModel& model, int64_t id);

// Conv2d node `node`'s filters, [out, in, kh, kw] (a copy). ValueError for another kind of node.
Tensor conv_filters(const session::TrainedModel& model, const std::string& node);

// The nodes of `model` whose output for one example is picture-shaped [K, h, w] (Grad-CAM's and the
// channel grid's candidates), and the MultiheadAttention nodes, in graph order.
std::vector<std::string> picture_nodes(const session::TrainedModel& model);
std::vector<std::string> attention_nodes(const session::TrainedModel& model);

}  // namespace plexus::explain
