#pragma once
// One time step of the recurrent cells, per (batch row, hidden unit), forward and backward:
// the formulas both backends run (ops/cpu, ops/cuda), so the CPU and the GPU compute the same
// numbers. The gate layout and order are PyTorch's (a row of G*H pre-activations, gate k at
// k*H): LSTM i, f, g, o; GRU r, z, n; RNN one. The step's pre-activation of gate k is
// gx + gh + b_hh (gx: the input projection with b_ih, gh: h_prev·W_hhᵀ), except GRU's n,
// whose recurrent part r ⊙ (gh_n + b_hn) sits inside.
#include "ops/scalar_math.h"

namespace plexus::math {

// What a cell keeps per unit for backward, at k*H of a row of kRnnSaved[cell]*H:
// LSTM the activated i, f, g, o; GRU r, z, n and gh_n + b_hn; RNN nothing (h itself suffices).
PLEXUS_HOST_DEVICE int rnn_gates(RnnCell cell) { return cell == RnnCell::Lstm ? 4 : cell == RnnCell::Gru ? 3 : 1; }
PLEXUS_HOST_DEVICE int rnn_saved(RnnCell cell) { return cell == RnnCell::Tanh ? 0 : 4; }

// Row r, unit j of step s.
template <RnnCell Cell>
PLEXUS_HOST_DEVICE void rnn_cell_forward(const Backend::RnnStep& s, int64_t r, int64_t j) {
  const int64_t h = s.h, gw = int64_t(rnn_gates(Cell)) * h;
  const float* gx = s.gx + r * s.gx_stride + j;
  const float* gh = s.gh + r * gw + j;
  auto b = [&](int k) { return s.bias ? s.bias[k * h + j] : 0.f; };
  auto pre = [&](int k) { return gx[k * h] + gh[k * h] + b(k); };
  const int64_t u = r * h + j;
  float hn;
  if constexpr (Cell == RnnCell::Lstm) {
    const float i = sigmoid(pre(0)), f = sigmoid(pre(1)), g = tanhf(pre(2)), o = sigmoid(pre(3));
    const float c = f * s.c_prev[u] + i * g;
    hn = o * tanhf(c);
    s.c_next[u] = c;
    float* sv = s.saved + r * 4 * h + j;
    sv[0] = i, sv[h] = f, sv[2 * h] = g, sv[3 * h] = o;
  } else if constexpr (Cell == RnnCell::Gru) {
    const float rg = sigmoid(pre(0)), z = sigmoid(pre(1));
    const float ghn = gh[2 * h] + b(2);
    const float n = tanhf(gx[2 * h] + rg * ghn);
    hn = (1.f - z) * n + z * s.h_prev[u];
    float* sv = s.saved + r * 4 * h + j;
    sv[0] = rg, sv[h] = z, sv[2 * h] = n, sv[3 * h] = ghn;
  } else {
    hn = tanhf(pre(0));
  }
  s.h_next[u] = hn;
  s.out[r * s.out_stride + j] = hn;
}

// Row r, unit j of step s's backward: dh (the gradient reaching h_next from later steps)
// plus the output's own gradient dout gives the gates' gradients dgx (of the input
// projection) and dgh (of gh, and of b_hh); for LSTM dc goes from c_next to c_prev in place;
// for GRU dh becomes z ⊙ dh, the part of h_prev's gradient that bypasses W_hh.
template <RnnCell Cell>
PLEXUS_HOST_DEVICE void rnn_cell_backward(const Backend::RnnStepGrad& s, int64_t r, int64_t j) {
  const int64_t h = s.h, gw = int64_t(rnn_gates(Cell)) * h;
  const int64_t u = r * h + j;
  const float dh = s.dh[u] + s.dout[r * s.dout_stride + j];
  float* dgx = s.dgx + r * s.dgx_stride + j;
  float* dgh = s.dgh + r * gw + j;
  if constexpr (Cell == RnnCell::Lstm) {
    const float* sv = s.saved + r * 4 * h + j;
    const float i = sv[0], f = sv[h], g = sv[2 * h], o = sv[3 * h];
    const float tc = tanhf(s.c_next[u]);
    const float dc = s.dc[u] + dh * o * (1.f - tc * tc);
    const float di = dc * g * i * (1.f - i), df = dc * s.c_prev[u] * f * (1.f - f);
    const float dg = dc * i * (1.f - g * g), d_o = dh * tc * o * (1.f - o);
    s.dc[u] = dc * f;
    dgx[0] = dgh[0] = di;
    dgx[h] = dgh[h] = df;
    dgx[2 * h] = dgh[2 * h] = dg;
    dgx[3 * h] = dgh[3 * h] = d_o;
  } else if constexpr (Cell == RnnCell::Gru) {
    const float* sv = s.saved + r * 4 * h + j;
    const float rg = sv[0], z = sv[h], n = sv[2 * h], ghn = sv[3 * h];
    const float dn = dh * (1.f - z) * (1.f - n * n);
    const float dz = dh * (s.h_prev[u] - n) * z * (1.f - z);
    const float dr = dn * ghn * rg * (1.f - rg);
    dgx[0] = dgh[0] = dr;
    dgx[h] = dgh[h] = dz;
    dgx[2 * h] = dn;
    dgh[2 * h] = dn * rg;
    s.dh[u] = dh * z;
  } else {
    const float y = s.h_next[u];
    dgx[0] = dgh[0] = dh * (1.f - y * y);
  }
}

}  // namespace plexus::math
