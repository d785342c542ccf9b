#pragma once
// Recurrent layers' sequence ops: one layer, one direction, over a batch-first sequence.
// The input projection of all steps, gx = x·W_ihᵀ + b_ih [N, T, G*H], is one linear() done
// by the caller; these run the recurrence, a product h_prev·W_hhᵀ and a fused gate step per
// time step, and record ONE autograd node whose backward is hand-written backpropagation
// through time: a fused gate-backward step and one product for dh per step (in reverse),
// then dW_hh as a single product over all steps. PyTorch's conventions: W_hh [G*H, H], gate
// order LSTM i,f,g,o, GRU r,z,n (b_hn inside r ⊙ (W_hn h + b_hn)), RNN h = tanh(…).
#include "tensor/tensor.h"

namespace plexus {

// The full output sequence [N, T, H] (h at each step, in time order also when `reverse`),
// and the final state(s) [N, H] (after the last step processed: t = 0 when reverse). All
// three are differentiable.
struct RecurrentOutput {
  Tensor output, h, c;  // c: LSTM only
};

// gx [N, T, G*H]; weight_hh [G*H, H]; bias_hh [G*H] or undefined; h0, c0 [N, H] or undefined
// (zeros). `reverse` runs t = T-1 … 0 (the backward direction of a bidirectional layer).
RecurrentOutput lstm_sequence(const Tensor& gx, const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& h0,
                              const Tensor& c0, bool reverse = false);
RecurrentOutput gru_sequence(const Tensor& gx, const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& h0,
                             bool reverse = false);
RecurrentOutput rnn_tanh_sequence(const Tensor& gx, const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& h0,
                                  bool reverse = false);

}  // namespace plexus
