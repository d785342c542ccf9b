#include "nn/recurrent.h"

#include <cmath>
#include <string>

#include "autograd/grad_mode.h"
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

namespace {
// Per example n, the step order of its first L = lengths[n] steps reversed and the rest left
// where they are, [N, T, width] for gather along dim 1: gathering with it flips each example's
// steps (twice: back), so the backward direction runs as a forward one that starts at L - 1.
Tensor flip_index(const Tensor& lengths, int64_t steps, int64_t width) {
  NoGradGuard no_grad;
  const int64_t n = lengths.shape()[0];
  const Tensor position = arange(steps).to(lengths.device()).reshape({1, steps});
  const Tensor length = unsqueeze(lengths, 1);
  const Tensor flipped = where(lt(position, length), length - 1.f - position, position);
  return contiguous(expand(unsqueeze(flipped, 2), {n, steps, width}));
}
}  // namespace

Recurrent::Result Recurrent::run(const Tensor& x, const Tensor& lengths) {
  if (x.dim() != 3 || x.shape()[2] != input_size_)
    throw ShapeError(type_name() + ": expected input [batch, time, " + std::to_string(input_size_) + "], got " +
                     to_string(x.shape()));
  const int64_t n = x.shape()[0], hidden = opt_.hidden_size;
  const bool padded = lengths.defined();
  if (padded && lengths.shape() != Shape{n})
    throw ShapeError(type_name() + ": expected lengths [" + std::to_string(n) + "], one per example, got " +
                     to_string(lengths.shape()));
  const bool carrying = carry_ && is_training();
  if (carrying && padded)
    throw ValueError(type_name() + ": carry_state does not combine with lengths: padded examples are independent, "
                                   "not parts of one stream");
  // A carried state fits only a batch of the same size on the same device.
  const bool resume = carrying && !h_.empty() && h_[0].shape()[0] == n && h_[0].device() == x.device();
  if (carrying && !resume) on_reset_state();
  // Padded: each example's steps from its length on are zeros in every output, and the
  // backward direction runs on each example's steps flipped. On the CPU the steps after the
  // batch's longest example are not run at all (a dataset's padding is its longest example's:
  // most batches are shorter); on a device, reading the lengths back would stall it.
  const int64_t padded_steps = x.shape()[1];
  int64_t steps = padded_steps;
  Tensor length, valid, last;
  if (padded) {
    NoGradGuard no_grad;
    length = clamp(lengths, 1.f, float(steps));
    if (x.device().is_cpu()) steps = int64_t(max(length).item());
    valid = unsqueeze(lt(arange(steps).to(x.device()).reshape({1, steps}), unsqueeze(length, 1)), 2);
    last = contiguous(expand((length - 1.f).reshape({n, 1, 1}), {n, 1, hidden}));
  }
  Tensor in = steps < padded_steps ? narrow(x, 1, 0, steps) : x;
  std::vector<Tensor> finals;
  for (int64_t l = 0; l < opt_.num_layers; ++l) {
    if (l > 0) in = dropout(in, opt_.dropout, is_training());
    std::vector<Tensor> outs;
    finals.clear();
    for (int64_t d = 0; d < directions(); ++d) {
      const size_t k = size_t(l * directions() + d);
      const Direction& p = dirs_[k];
      const bool flip = padded && d == 1;
      const Tensor flipper = flip ? flip_index(length, steps, in.shape()[2]) : Tensor();
      const Tensor gx = linear(flip ? gather(in, 1, flipper) : in, p.weight_ih, p.bias_ih);
      const Tensor h0 = resume ? h_[k] : Tensor(), c0 = resume && cell_ == RnnCell::Lstm ? c_[k] : Tensor();
      const bool reverse = d == 1 && !padded;  // padded, the flip reverses
      RecurrentOutput r = cell_ == RnnCell::Lstm ? lstm_sequence(gx, p.weight_hh, p.bias_hh, h0, c0, reverse)
                          : cell_ == RnnCell::Gru ? gru_sequence(gx, p.weight_hh, p.bias_hh, h0, reverse)
                                                  : rnn_tanh_sequence(gx, p.weight_hh, p.bias_hh, h0, reverse);
      if (carrying) {
        h_.resize(dirs_.size());
        c_.resize(dirs_.size());
        h_[k] = r.h.detach();
        if (r.c.defined()) c_[k] = r.c.detach();
      }
      if (!padded) {
        outs.push_back(r.output);
        finals.push_back(r.h);
        continue;
      }
      // Each example's state after its own last step: step L - 1 of the (flipped) run.
      finals.push_back(squeeze(gather(r.output, 1, last), 1));
      const Tensor out = flip ? gather(r.output, 1, flip_index(length, steps, hidden)) : r.output;
      outs.push_back(where(valid, out, zeros({}, x.device())));
    }
    in = outs.size() == 1 ? outs[0] : concat(outs, 2);
  }
  if (steps < padded_steps) in = concat({in, zeros({n, padded_steps - steps, in.shape()[2]}, in.device())}, 1);
  return {in, finals.size() == 1 ? finals[0] : concat(finals, 1)};
}

void Recurrent::on_carry_state(bool on) {
  carry_ = on;
  if (!on) on_reset_state();
}

void Recurrent::on_reset_state() {
  h_.clear();
  c_.clear();
}

void Recurrent::own_carried_state(NamedTensors& out) const {
  for (size_t k = 0; k < h_.size(); ++k) {
    if (h_[k].defined()) out.emplace_back("h." + std::to_string(k), h_[k]);
    if (k < c_.size() && c_[k].defined()) out.emplace_back("c." + std::to_string(k), c_[k]);
  }
}

void Recurrent::load_own_carried_state(const NamedTensors& state) {
  std::vector<Tensor> h(dirs_.size()), c(dirs_.size());
  const Device device = dirs_.empty() ? Device::cpu() : dirs_[0].weight_ih.device();
  for (const auto& [name, t] : state) {
    const bool is_h = name.rfind("h.", 0) == 0, is_c = name.rfind("c.", 0) == 0 && cell_ == RnnCell::Lstm;
    size_t k = dirs_.size();
    if (is_h || is_c) {
      const std::string index = name.substr(2);
      if (!index.empty() && index.find_first_not_of("0123456789") == std::string::npos && index.size() < 6)
        k = size_t(std::stoul(index));
    }
    if (k >= dirs_.size() || t.dim() != 2 || t.shape()[1] != opt_.hidden_size)
      throw ValueError(type_name() + ": the carried state '" + name + "' " + to_string(t.shape()) +
                       " does not fit this layer (hidden size " + std::to_string(opt_.hidden_size) + ", " +
                       std::to_string(dirs_.size()) + " layers × directions)");
    (is_h ? h : c)[k] = t.to(device).clone();  // its own storage, not the checkpoint file's
  }
  h_.clear();
  c_.clear();
  if (state.empty()) return;
  h_ = std::move(h);
  c_ = std::move(c);
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
