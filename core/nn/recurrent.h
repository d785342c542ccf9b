#pragma once
// Recurrent layers over batch-first sequences: x [N, T, F] -> the full output sequence
// [N, T, H * directions] (the directions' outputs side by side, forward first). Parameters
// carry PyTorch's names, shapes and gate orders (weight_ih_l0 [G*H, F], weight_hh_l0
// [G*H, H], bias_ih_l0, bias_hh_l0, "_reverse" for the backward direction), so a
// torch.nn.LSTM / GRU / RNN state dict loads as it is; all start U(-1/sqrt(H), 1/sqrt(H)).
//
// Padded examples (forward(x, lengths), lengths [N]): each example is its first lengths[n]
// steps alone, as PyTorch's packed sequences are: the backward direction starts at its last
// step, the outputs after it are zeros, and run()'s state holds each direction's state after
// its last step (forward: at lengths[n] - 1; backward: at 0). Lengths are clamped to [1, T].
//
// Stateful (Module::set_carry_state): while carrying and training, each forward starts from
// the final states of the previous one, detached (truncated backpropagation through time
// over consecutive batches of a stream); a batch of another size, reset_state(), or turning
// carrying off starts again from zeros. Eval forwards always start from zeros and leave the
// carried state as it is.
#include <vector>

#include "nn/module.h"
#include "ops/backend.h"

namespace plexus::nn {

struct RecurrentOptions {
  int64_t hidden_size = 128;
  int64_t num_layers = 1;
  bool bidirectional = false;
  float dropout = 0.f;  // on the outputs of every layer but the last, in training
};

// The shared body of LSTM, GRU and RNN: layers x directions of one cell type.
class Recurrent : public Module {
 public:
  struct Result {
    Tensor output;  // [N, T, H * directions]
    Tensor state;   // the last layer's final hidden state [N, H * directions]: PyTorch's h_n of
                    // the last layer, directions side by side (forward first)
  };
  Tensor forward(const Tensor& x) override { return run(x, Tensor()).output; }
  Tensor forward(const Tensor& x, const Tensor& lengths) { return run(x, lengths).output; }
  Result run(const Tensor& x, const Tensor& lengths);
  std::string extra_repr() const override;
  const RecurrentOptions& options() const { return opt_; }
  int64_t input_size() const { return input_size_; }
  int64_t directions() const { return opt_.bidirectional ? 2 : 1; }

 protected:
  Recurrent(RnnCell cell, const char* type, int64_t input_size, const RecurrentOptions& opt, Generator* gen);
  void on_carry_state(bool on) override;
  void on_reset_state() override;
  // "h.<k>" and "c.<k>" (LSTM) per layer and direction k.
  void own_carried_state(NamedTensors& out) const override;
  void load_own_carried_state(const NamedTensors& state) override;

 private:
  struct Direction {
    Tensor weight_ih, weight_hh, bias_ih, bias_hh;
  };
  RnnCell cell_;
  int64_t input_size_;
  RecurrentOptions opt_;
  std::vector<Direction> dirs_;  // layer-major: layer l, direction d at l * directions() + d
  bool carry_ = false;
  std::vector<Tensor> h_, c_;  // the carried final states, one per direction (empty: none)
};

// Gates i, f, g, o: c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c').
class LSTM : public Recurrent {
 public:
  LSTM(int64_t input_size, const RecurrentOptions& opt, Generator* gen = nullptr);
  std::string type_name() const override { return "LSTM"; }
};

// Gates r, z, n: n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)), h' = (1 - z) ⊙ n + z ⊙ h.
class GRU : public Recurrent {
 public:
  GRU(int64_t input_size, const RecurrentOptions& opt, Generator* gen = nullptr);
  std::string type_name() const override { return "GRU"; }
};

// h' = tanh(W_ih x + b_ih + W_hh h + b_hh).
class RNN : public Recurrent {
 public:
  RNN(int64_t input_size, const RecurrentOptions& opt, Generator* gen = nullptr);
  std::string type_name() const override { return "RNN"; }
};

}  // namespace plexus::nn
