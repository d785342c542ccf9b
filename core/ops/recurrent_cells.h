#pragma once
// One time step of the recurrent cells, per (batch row, hidden unit), forward and backward:
// the formulas both backends run (ops/cpu, ops/cuda), so the CPU and the GPU compute the same
// numbers. The gate layout and order are PyTorch's (a row of G*H pre-activations, gate k at
// k*H): LSTM i, f, g, o; GRU r, z, n; RNN one. The step's pre-activation of gate k is
// gx + gh + b_hh (gx: the input projection with b_ih, gh: h_prev·W_hhᵀ), except GRU's n,
// whose recurrent part r ⊙ (gh_n + b_hn) sits inside.
#include "ops/scalar_math.h"

#include <bit>
#include <cstdint>

namespace plexus::math {

// The gates' sigmoid and tanh. The device's come from its math library; the host's are
// branch-free (within 4e-7 of the exact values, relative: tests/test_recurrent.cpp) so that the gate loops
// vectorise, where a call into libm per value made the gates half the training step.
#ifdef __CUDA_ARCH__
PLEXUS_HOST_DEVICE float gate_sigmoid(float x) { return sigmoid(x); }
PLEXUS_HOST_DEVICE float gate_tanh(float x) { return tanhf(x); }
#else
// e^x for x in [-87, 88] (clamped: the sigmoid of anything beyond is 0 or 1 anyway): x = n ln2
// + r with |r| <= ln2/2 (ln2 split in two so n ln2 is exact), e^r by its Taylor series to r^7
// (error < 2e-8), then 2^n placed in the exponent bits.
inline float gate_exp(float x) {
  x = x > -87.f ? x : -87.f;
  x = x < 88.f ? x : 88.f;
  // Adding and subtracting 1.5·2^23 rounds to the nearest integer (roundf needs SSE4.1).
  const float n = (x * 1.44269504f + 12582912.f) - 12582912.f;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.f / 5040;
  p = p * r + 1.f / 720;
  p = p * r + 1.f / 120;
  p = p * r + 1.f / 24;
  p = p * r + 1.f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  return p * std::bit_cast<float>((int32_t(n) + 127) << 23);
}
inline float gate_sigmoid(float x) { return 1.f / (1.f + gate_exp(-x)); }
// Eigen's rational approximation x·P(x²)/Q(x²) on [-7.9, 7.9], where tanh rounds to ±1 beyond.
inline float gate_tanh(float x) {
  x = x > -7.90531111f ? x : -7.90531111f;
  x = x < 7.90531111f ? x : 7.90531111f;
  const float x2 = x * x;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 - 8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return x * p / q;
}
#endif

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
  auto b = [&](int k) { return s.bias[k * h + j]; };
  auto pre = [&](int k) { return gx[k * h] + gh[k * h] + b(k); };
  const int64_t u = r * h + j;
  float hn;
  if constexpr (Cell == RnnCell::Lstm) {
    const float i = gate_sigmoid(pre(0)), f = gate_sigmoid(pre(1)), g = gate_tanh(pre(2)), o = gate_sigmoid(pre(3));
    const float c = f * s.c_prev[u] + i * g;
    hn = o * gate_tanh(c);
    s.c_next[u] = c;
    float* sv = s.saved + r * 4 * h + j;
    sv[0] = i, sv[h] = f, sv[2 * h] = g, sv[3 * h] = o;
  } else if constexpr (Cell == RnnCell::Gru) {
    const float rg = gate_sigmoid(pre(0)), z = gate_sigmoid(pre(1));
    const float ghn = gh[2 * h] + b(2);
    const float n = gate_tanh(gx[2 * h] + rg * ghn);
    hn = (1.f - z) * n + z * s.h_prev[u];
    float* sv = s.saved + r * 4 * h + j;
    sv[0] = rg, sv[h] = z, sv[2 * h] = n, sv[3 * h] = ghn;
  } else {
    hn = gate_tanh(pre(0));
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
    const float tc = gate_tanh(s.c_next[u]);
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
