// The recurrent sequence ops (ops/rnn_sequence.h) and their backpropagation through time.
// Working buffers are in processing order s (t = s, or T-1-s when reversed), time-major:
// hs [T+1, N, H] holds the state before step s at s (h0 first), cs the same for LSTM's cell,
// saved [T, N, 4H] the gate activations and dgh [T, N, G*H] the gates' gradients, so that
// dW_hh = dghᵀ·hs[0:T] is one product over all T*N rows.
#include "ops/rnn_sequence.h"

#include <string>

#include "autograd/node.h"
#include "ops/backend.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "ops/recurrent_cells.h"
#include "util/error.h"

namespace plexus {
namespace {

const char* op_name(RnnCell cell) {
  return cell == RnnCell::Lstm ? "lstm_sequence" : cell == RnnCell::Gru ? "gru_sequence" : "rnn_tanh_sequence";
}

void check_state(const char* op, const char* what, const Tensor& t, int64_t n, int64_t h) {
  if (t.defined() && t.shape() != Shape{n, h})
    throw ShapeError(std::string(op) + ": " + what + " must have shape [" + std::to_string(n) + ", " +
                     std::to_string(h) + "] (batch, hidden), got " + to_string(t.shape()));
}

// [n, h] rows of a contiguous buffer, as a tensor (no history).
Tensor rows(const Tensor& buf, int64_t at, int64_t n, int64_t h) { return make_view(buf, {n, h}, {h, 1}, buf.offset() + at); }

RecurrentOutput run_sequence(RnnCell cell, const Tensor& gx, const Tensor& weight_hh, const Tensor& bias_hh,
                             const Tensor& h0, const Tensor& c0, bool reverse) {
  const char* op = op_name(cell);
  const int64_t gates = math::rnn_gates(cell), nsaved = math::rnn_saved(cell);
  if (weight_hh.dim() != 2 || weight_hh.shape()[0] != gates * weight_hh.shape()[1])
    throw ShapeError(std::string(op) + ": weight_hh must have shape [" + std::to_string(gates) +
                     "*hidden, hidden], got " + to_string(weight_hh.shape()));
  const int64_t h = weight_hh.shape()[1], gw = gates * h;
  if (gx.dim() != 3 || gx.shape()[2] != gw)
    throw ShapeError(std::string(op) + ": the input projection must have shape [batch, time, " + std::to_string(gw) +
                     "] for hidden size " + std::to_string(h) + ", got " + to_string(gx.shape()));
  const int64_t n = gx.shape()[0], steps = gx.shape()[1];
  if (n == 0 || steps == 0 || h == 0)
    throw ShapeError(std::string(op) + ": needs at least one batch row, one time step and one hidden unit, got " +
                     "input projection " + to_string(gx.shape()) + " and weight_hh " + to_string(weight_hh.shape()));
  if (bias_hh.defined() && bias_hh.shape() != Shape{gw})
    throw ShapeError(std::string(op) + ": bias_hh must have shape [" + std::to_string(gw) + "], got " +
                     to_string(bias_hh.shape()));
  check_state(op, "h0", h0, n, h);
  check_state(op, "c0", c0, n, h);
  check_same_device(op, {gx, weight_hh, bias_hh, h0, c0});
  const bool lstm = cell == RnnCell::Lstm;
  const Device dev = gx.device();
  Backend& be = backend(dev);

  const Tensor x = contiguous_data(gx), w = contiguous_data(weight_hh);
  const Tensor b = bias_hh.defined() ? contiguous_data(bias_hh) : zeros({gw}, dev);
  const int64_t nh = n * h, nth = n * steps * h;
  // The result in one buffer: the output sequence, then h_T, then c_T; the three tensors
  // returned are views of it, so one node covers them.
  Tensor packed = empty({nth + nh * (lstm ? 2 : 1)}, dev);
  Tensor hs = empty({steps + 1, n, h}, dev), cs = lstm ? empty({steps + 1, n, h}, dev) : Tensor();
  const Tensor saved = nsaved ? empty({steps, n, nsaved * h}, dev) : Tensor();
  const Tensor gh = empty({n, gw}, dev);
  {
    NoGradGuard no_grad;
    if (h0.defined()) rows(hs, 0, n, h).copy_(h0);
    else rows(hs, 0, n, h).zero_();
    if (lstm) {
      if (c0.defined()) rows(cs, 0, n, h).copy_(c0);
      else rows(cs, 0, n, h).zero_();
    }
  }
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = reverse ? steps - 1 - s : s;
    const float* h_prev = hs.data() + s * nh;
    be.gemm(false, true, n, gw, h, 1.f, h_prev, h, w.data(), h, 0.f, gh.data(), gw);
    Backend::RnnStep st{};
    st.cell = cell, st.n = n, st.h = h;
    st.gx = x.data() + t * gw, st.gx_stride = steps * gw;
    st.gh = gh.data(), st.bias = b.data();
    st.h_prev = h_prev, st.h_next = hs.data() + (s + 1) * nh;
    if (lstm) st.c_prev = cs.data() + s * nh, st.c_next = cs.data() + (s + 1) * nh;
    st.out = packed.data() + t * h, st.out_stride = steps * h;
    st.saved = nsaved ? saved.data() + s * n * nsaved * h : nullptr;
    be.rnn_cell_forward(st);
  }
  {
    NoGradGuard no_grad;
    rows(packed, nth, n, h).copy_(rows(hs, steps * nh, n, h));
    if (lstm) rows(packed, nth + nh, n, h).copy_(rows(cs, steps * nh, n, h));
  }

  if (needs_grad(gx, weight_hh, bias_hh, h0, c0)) {
    record(packed, op, {gx, weight_hh, bias_hh, h0, c0},
           [cell, sw = Saved(w), hs, cs, saved, n, steps, h, gw, nsaved, reverse, lstm](const Tensor& g) -> Grads {
             const Tensor gp = contiguous_data(g), wv = sw.get();
             const Device d = gp.device();
             Backend& bk = backend(d);
             const int64_t nh = n * h, nth = n * steps * h;
             // dh: the gradient reaching the current step's h from later steps, starting with
             // h_T's own; dc the same for the cell.
             Tensor dh = rows(gp, nth, n, h).clone(), dc = lstm ? rows(gp, nth + nh, n, h).clone() : Tensor();
             Tensor dgh = empty({steps, n, gw}, d), dgx = empty({n, steps, gw}, d);
             for (int64_t s = steps - 1; s >= 0; --s) {
               const int64_t t = reverse ? steps - 1 - s : s;
               Backend::RnnStepGrad st{};
               st.cell = cell, st.n = n, st.h = h;
               st.saved = nsaved ? saved.data() + s * n * nsaved * h : nullptr;
               st.h_prev = hs.data() + s * nh, st.h_next = hs.data() + (s + 1) * nh;
               if (lstm) st.c_prev = cs.data() + s * nh, st.c_next = cs.data() + (s + 1) * nh, st.dc = dc.data();
               st.dh = dh.data();
               st.dout = gp.data() + t * h, st.dout_stride = steps * h;
               st.dgh = dgh.data() + s * n * gw;
               st.dgx = dgx.data() + t * gw, st.dgx_stride = steps * gw;
               bk.rnn_cell_backward(st);
               // h_prev's gradient through W_hh; GRU's cell left z ⊙ dh in dh to add to.
               bk.gemm(false, false, n, h, gw, 1.f, st.dgh, gw, wv.data(), h, cell == RnnCell::Gru ? 1.f : 0.f,
                       dh.data(), h);
             }
             Tensor dw = empty({gw, h}, d);
             bk.gemm(true, false, gw, h, steps * n, 1.f, dgh.data(), gw, hs.data(), h, 0.f, dw.data(), h);
             const Tensor db = sum(dgh.view({steps * n, gw}), {0});
             return {dgx, dw, db, dh, dc};
           });
  }
  RecurrentOutput r;
  r.output = packed.narrow(0, 0, nth).view({n, steps, h});
  r.h = packed.narrow(0, nth, nh).view({n, h});
  if (lstm) r.c = packed.narrow(0, nth + nh, nh).view({n, h});
  return r;
}

}  // namespace

RecurrentOutput lstm_sequence(const Tensor& gx, const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& h0,
                              const Tensor& c0, bool reverse) {
  return run_sequence(RnnCell::Lstm, gx, weight_hh, bias_hh, h0, c0, reverse);
}

RecurrentOutput gru_sequence(const Tensor& gx, const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& h0,
                             bool reverse) {
  return run_sequence(RnnCell::Gru, gx, weight_hh, bias_hh, h0, Tensor(), reverse);
}

RecurrentOutput rnn_tanh_sequence(const Tensor& gx, const Tensor& weight_hh, const Tensor& bias_hh, const Tensor& h0,
                                  bool reverse) {
  return run_sequence(RnnCell::Tanh, gx, weight_hh, bias_hh, h0, Tensor(), reverse);
}

}  // namespace plexus
