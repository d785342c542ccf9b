#pragma once
// The CPU kernels of the fused residual step (ops/residual.h): s = a + dropout(b) over [rows, d],
// and LayerNorm(s) in the same pass over each row, rows across the pool's threads.
#include <cstdint>

namespace plexus::cpu {

// Dropout's keep-or-drop as a pure function of one key and the element's place: element (r, j)
// survives iff hash(key, r, j) >= threshold, and is then scaled by `scale`. Backward recomputes
// the mask from the key instead of keeping one, and any thread count draws the same.
struct DropoutDraw {
  uint64_t key = 0;
  uint32_t threshold = 0;  // p · 2^32: 0 keeps everything
  float scale = 1.f;       // 1 / (1 - p); 0 for p = 1
  bool keeps_all() const { return threshold == 0 && scale == 1.f; }
};
// Training with drop probability p in [0, 1] keyed by `key`; evaluation (or p = 0) keeps all.
DropoutDraw dropout_draw(float p, bool training, uint64_t key);

// s = a + b · mask; with y non-null also y = LayerNorm(s) (weight, bias [d] or null) and the
// rows' mean and invstd, as layer_norm computes them.
void residual_dropout(float* s, float* y, float* mean, float* invstd, const float* a, const float* b,
                      const float* weight, const float* bias, int64_t rows, int64_t d, float eps,
                      const DropoutDraw& draw);
// db = ds · mask.
void dropout_backward(float* db, const float* ds, int64_t rows, int64_t d, const DropoutDraw& draw);

}  // namespace plexus::cpu
