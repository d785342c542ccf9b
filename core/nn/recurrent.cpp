#include "nn/recurrent.h"

#include <cmath>
#include <string>

#include "nn/init.h"
#include "ops/ops.h"
#include "ops/rnn_sequence.h"
#include "ops/recurrent_cells.h"
#include "util/error.h"

namespace plexus::nn {

Recurrent::Recurrent(RnnCell cell, const char* type, int64_t input_size, const RecurrentOptions& opt, Generator* gen)
    : cell_(cell), input_size_(input_size), opt_(opt) {
  if (input_size < 1 || opt.hidden_size < 1 || opt.num_layers < 1)
    throw ValueError(std::string(type) + ": input_size, hidden_size and num_layers must be positive, got " +
                     std::to_string(input_size) + ", " + std::to_string(opt.hidden_size) + ", " +
                     std::to_string(opt.num_layers));
  if (!(opt.dropout >= 0.f && opt.dropout < 1.f))
    throw ValueError(std::string(type) + ": dropout must be in [0, 1), got " + std::to_string(opt.dropout));
  const int64_t h = opt.hidden_size, gw = math::rnn_gates(cell) * h;
  const float bound = 1.f / std::sqrt(float(h));
  auto param = [&](const std::string& name, Shape shape) {
    Tensor t = register_parameter(name, empty(shape));
    init::uniform_(t, -bound, bound, gen);
    return t;
  };
  for (int64_t l = 0; l < opt.num_layers; ++l)
    for (int64_t d = 0; d < directions(); ++d) {
      const std::string suffix = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      const int64_t in = l == 0 ? input_size : h * directions();
      Direction dir;
      dir.weight_ih = param("weight_ih" + suffix, {gw, in});
      dir.weight_hh = param("weight_hh" + suffix, {gw, h});
      dir.bias_ih = param("bias_ih" + suffix, {gw});
      dir.bias_hh = param("bias_hh" + suffix, {gw});
      dirs_.push_back(dir);
    }
}

Tensor Recurrent::forward(const Tensor& x) {
  if (x.dim() != 3 || x.shape()[2] != input_size_)
    throw ShapeError(type_name() + ": expected input [batch, time, " + std::to_string(input_size_) + "], got " +
                     to_string(x.shape()));
  const int64_t n = x.shape()[0];
  const bool carrying = carry_ && is_training();
  // A carried state fits only a batch of the same size on the same device.
  const bool resume = carrying && !h_.empty() && h_[0].shape()[0] == n && h_[0].device() == x.device();
  if (carrying && !resume) on_reset_state();
  Tensor in = x;
  for (int64_t l = 0; l < opt_.num_layers; ++l) {
    if (l > 0) in = dropout(in, opt_.dropout, is_training());
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < directions(); ++d) {
      const size_t k = size_t(l * directions() + d);
      const Direction& p = dirs_[k];
      const Tensor gx = linear(in, p.weight_ih, p.bias_ih);
      const Tensor h0 = resume ? h_[k] : Tensor(), c0 = resume && cell_ == RnnCell::Lstm ? c_[k] : Tensor();
      RecurrentOutput r = cell_ == RnnCell::Lstm ? lstm_sequence(gx, p.weight_hh, p.bias_hh, h0, c0, d == 1)
                          : cell_ == RnnCell::Gru ? gru_sequence(gx, p.weight_hh, p.bias_hh, h0, d == 1)
                                                  : rnn_tanh_sequence(gx, p.weight_hh, p.bias_hh, h0, d == 1);
      if (carrying) {
        h_.resize(dirs_.size());
        c_.resize(dirs_.size());
        h_[k] = r.h.detach();
        if (r.c.defined()) c_[k] = r.c.detach();
      }
      outs.push_back(r.output);
    }
    in = outs.size() == 1 ? outs[0] : concat(outs, 2);
  }
  return in;
}

void Recurrent::on_carry_state(bool on) {
  carry_ = on;
  if (!on) on_reset_state();
}

void Recurrent::on_reset_state() {
  h_.clear();
  c_.clear();
}

std::string Recurrent::extra_repr() const {
  std::string s = "input=" + std::to_string(input_size_) + ", hidden=" + std::to_string(opt_.hidden_size);
  if (opt_.num_layers != 1) s += ", layers=" + std::to_string(opt_.num_layers);
  if (opt_.bidirectional) s += ", bidirectional=true";
  if (opt_.dropout != 0.f) s += ", dropout=" + std::to_string(opt_.dropout);
  return s;
}

LSTM::LSTM(int64_t input_size, const RecurrentOptions& opt, Generator* gen)
    : Recurrent(RnnCell::Lstm, "LSTM", input_size, opt, gen) {}
GRU::GRU(int64_t input_size, const RecurrentOptions& opt, Generator* gen)
    : Recurrent(RnnCell::Gru, "GRU", input_size, opt, gen) {}
RNN::RNN(int64_t input_size, const RecurrentOptions& opt, Generator* gen)
    : Recurrent(RnnCell::Tanh, "RNN", input_size, opt, gen) {}

}  // namespace plexus::nn
