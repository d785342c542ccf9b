#!/usr/bin/python3
"""Reference values for tests/core/ops/test_ops_forward.cpp, computed with PyTorch (float32, CPU).

The test does not run Python: this script prints a C++ block of literal inputs and
PyTorch's outputs, which is pasted into test_ops_forward.cpp between the
"BEGIN GENERATED" and "END GENERATED" markers (`--write` does that in place):

    /usr/bin/python3 tests/reference/gen_forward_refs.py --write tests/core/ops/test_ops_forward.cpp

The inputs are literal lists below. Most are multiples of 1/8 so that the decimal text
is the exact float32 value in both languages. The values were generated with Debian's
PyTorch (python3-torch 1.13) on x86-64; outputs are printed with 9 significant digits,
which round-trips float32 exactly.
"""
import math

import refblock  # same folder
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float32)

# ---- literal inputs ---------------------------------------------------------------------
INPUTS = {
    # elementwise
    "ew": ([3, 4], [-3.0, -2.125, -1.5, -0.75, -0.25, 0.0, 0.125, 0.5, 0.875, 1.25, 2.25, 3.0]),
    "pos": ([8], [0.125, 0.5, 1.0, 1.75, 2.5, 4.0, 9.0, 20.0]),
    "big": ([8], [-100.0, -30.0, -20.5, -5.0, 5.0, 19.5, 30.0, 100.0]),
    # PReLU's slopes for "ew": one per channel (dim 1)
    "prelu_w": ([4], [0.25, -0.5, 1.5, 0.0]),
    # broadcasting binary ops: [2, 1, 4] with [3, 1] -> [2, 3, 4]
    "a": ([2, 1, 4], [0.5, -0.875, 1.125, -1.625, -1.5, -1.25, 0.875, -1.625]),
    "b": ([3, 1], [1.125, -0.25, -1.625]),
    # reductions: distinct values (no ties) ...
    "r": ([2, 3, 4], [0.25, -2.0, 1.5, 2.75, -0.5, 0.75, -2.75, 1.0, 2.5, -1.25, 0.0, -1.5,
                      1.75, -0.25, 2.0, -2.5, 0.5, 2.25, -1.75, -0.75, 1.25, -2.25, -1.0, -3.0]),
    # ... and one with ties (PyTorch returns the first extremal index)
    "ties": ([2, 4], [1.0, 3.0, 3.0, -2.0, -5.0, -5.0, 0.0, -5.0]),
    # matmul
    "mm_a": ([3, 4], [-1.375, 1.375, 1.25, -1.5, -0.125, -1.375, 1.375, -1.625, -1.125, -0.25, -1.625, 1.125]),
    "mm_b": ([4, 2], [-1.625, -0.25, -1.75, -1.0, 0.25, 1.25, -0.875, -1.125]),
    "bmm_a": ([2, 3, 4], [0.375, -0.625, -1.25, -0.5, 0.875, -1.25, -1.5, -1.625, -0.375, 1.875, 1.375, 0.5,
                          1.625, 1.625, 0.875, 0.375, -0.125, -0.625, -0.125, -1.375, 0.375, 1.875, 0.625, 1.5]),
    "bmm_b": ([4, 5], [0.25, -1.5, -1.125, 2.0, 1.25, -0.75, 0.625, -0.875, 1.875, 1.25, -1.75, -1.5, 0.5,
                       0.625, 0.75, 1.875, 1.625, -1.5, -1.375, 0.125]),
    "bc_a": ([2, 1, 3, 4], [1.75, -1.5, -1.625, 0.375, 1.5, 0.25, 1.0, 0.75, -1.875, 1.625, 0.75, -0.75,
                            -1.125, 1.875, -1.625, -0.375, 0.25, -1.0, -0.125, 1.125, 1.125, 1.875, -1.375, -0.75]),
    "bc_b": ([3, 4, 2], [1.5, 1.125, 0.125, -1.0, 1.375, 0.125, 1.25, 0.75, 1.0, -0.25, -0.875, -1.375,
                         -0.625, -0.875, -0.25, -0.25, -2.0, 1.875, -0.625, 0.0, 0.25, -2.0, -0.875, 1.25]),
    # softmax over a middle dim
    "sm": ([2, 3, 4], [1.25, -0.125, 1.875, 1.5, -0.5, -2.0, 2.5, 1.0, 1.875, 2.125, 2.375, 2.875,
                       -2.625, 0.625, 2.375, 1.375, 0.125, 0.125, 0.125, 0.125, -2.25, 0.75, 2.0, 0.125]),
    "sm_big": ([2, 3], [1000.0, 1001.0, 1002.0, -1000.0, 0.0, 1000.0]),
    # conv2d
    "conv_x": ([2, 4, 5, 6], [
        -1.625, -0.5, -1.5, -0.375, 1.5, -0.75, -1.125, 0.625, -1.625, -1.25, -2.0, -0.875, -1.25, 0.875, -1.875,
        -1.5, -0.375, 1.0, -0.875, 0.0, 0.75, 0.875, 1.75, -1.125, -1.125, 1.875, 1.625, 1.75, 1.75, 0.375,
        -1.375, -0.875, -1.25, 0.625, 0.0, 1.75, -0.75, -1.875, -0.375, 0.875, -0.875, -1.875, 0.375, -1.375, 0.0,
        0.875, -0.75, 0.75, -0.25, 2.0, 0.625, -0.25, -0.5, -0.125, 1.125, -0.25, -0.5, 1.875, 0.75, -1.875,
        -1.875, 0.125, 1.75, 0.0, -0.5, 0.75, 1.5, 0.75, 0.875, -1.375, -0.25, -1.25, -0.25, 1.75, -0.5,
        0.625, -0.375, 1.75, -2.0, 1.75, 0.75, -1.375, -1.125, 1.0, -0.5, 1.75, -0.625, 1.375, 0.625, -1.375,
        1.125, 1.625, 1.125, -1.375, -0.75, -0.75, -1.0, -1.875, -0.875, 1.625, -0.875, 1.75, 0.75, -0.875, -1.0,
        -1.875, -2.0, -1.25, -1.0, 1.375, -0.5, -0.375, -1.875, 0.0, -0.375, 0.25, 2.0, -0.125, 0.5, 0.0,
        1.25, -1.0, -1.625, 0.75, 1.625, 1.25, 2.0, -1.0, -0.875, 2.0, -1.875, 1.5, -0.625, -2.0, -0.875,
        -0.625, -0.875, 1.75, -1.125, -1.625, 0.5, 1.75, -1.25, -1.625, -0.125, -0.5, 0.125, -1.75, -1.25, 2.0,
        1.5, -1.875, -1.5, 1.5, 0.5, 2.0, 2.0, -0.5, 0.125, 1.5, 2.0, 1.75, 2.0, -0.125, 0.0,
        -0.5, 1.5, -1.0, 1.25, -1.125, 1.125, 1.5, 0.5, -1.5, -0.125, 1.375, -1.5, -0.375, 0.375, -1.125,
        -0.875, 0.875, -0.875, 0.0, -1.0, 1.625, -0.25, -1.25, 1.125, 1.875, -0.75, -0.25, -0.75, 1.375, 2.0,
        1.125, 0.625, 1.25, -0.5, 0.75, 0.5, -1.375, 0.875, -1.875, 0.625, 1.625, 1.5, -1.875, 1.0, 0.625,
        0.25, 2.0, -1.5, -1.125, -0.25, -1.25, -1.375, 0.0, 0.125, -1.75, -0.625, 0.125, -1.0, 1.375, 0.0,
        1.125, -0.875, 2.0, 1.875, 0.5, -1.375, 0.125, -1.625, -0.625, 1.375, -1.5, 0.125, -1.875, -1.375, 0.0]),
    "conv_w": ([6, 2, 3, 2], [
        -0.75, -0.125, -0.75, 0.0, -0.625, 0.75, -1.0, 0.25, 0.625, 0.0, -0.5, -0.875, 1.0, -0.125, -0.625,
        -0.375, 0.0, -0.875, -0.375, -0.25, 0.125, 0.125, 1.0, -0.25, 0.125, 0.75, 1.0, -0.375, 0.0, 0.375,
        -1.0, 0.0, -0.875, -1.0, -1.0, 1.0, -0.25, 1.0, 0.875, -0.125, 0.75, -0.625, 0.625, 0.875, 0.5,
        1.0, 0.125, -0.25, -0.125, 0.25, -0.25, -0.5, 0.5, 0.375, -0.875, -0.5, -1.0, -0.75, 0.0, 0.625,
        -0.375, -0.875, -0.75, 0.5, 1.0, 0.125, -0.125, 0.125, -0.875, 0.75, -0.375, -0.375]),
    "conv_b": ([6], [0.0, 0.75, -1.0, 0.0, 0.375, 0.25]),
    "conv2_x": ([1, 2, 4, 4], [0.5, -0.125, -1.75, 0.375, -0.375, 0.75, -0.625, -2.0, 0.625, 1.0, -1.375, 1.75,
                               0.125, 2.0, -0.5, -0.125, 2.0, -2.0, -1.375, 0.0, -1.375, -0.875, 1.125, -1.75,
                               1.125, -1.875, 0.375, 0.375, -0.25, -1.375, -0.875, 1.0]),
    "conv2_w": ([3, 2, 3, 3], [0.25, 0.875, -0.5, 0.125, -0.5, -0.875, 1.0, 0.625, 1.0, -0.5, 1.0, 1.0, -1.0,
                               -0.125, -0.75, -1.0, -0.875, -0.5, 0.375, -0.625, 0.5, 0.75, -0.875, -1.0, -0.125,
                               0.875, 0.0, -1.0, 0.75, -0.75, 1.0, -0.75, 1.0, -0.75, 0.875, 0.0, -0.75, 0.0,
                               -0.125, -0.25, -0.125, 0.75, 0.875, 0.5, -0.75, 0.875, 0.125, -0.875, -0.25, -0.75,
                               -0.5, 0.25, 0.0, 0.125]),
    "dw_w": ([4, 1, 2, 2], [-0.5, -1.0, 0.875, -0.875, 0.875, 0.0, -0.625, -0.25, 0.875, 0.125, 1.0, 0.125,
                            0.75, 0.75, 0.75, -0.625]),
    # pooling
    "pool_x": ([1, 2, 5, 5], [1.375, -1.5, -0.625, -2.375, 0.75, -2.875, -0.75, 0.625, -2.5, 1.0, 0.5, -0.875,
                              0.0, -1.375, -1.375, -2.5, 1.625, -2.375, -1.875, 2.875, 1.125, -1.0, -0.125, -2.0,
                              1.75, 2.0, 1.0, -0.875, -2.125, 2.625, -0.125, -1.25, 0.875, 0.875, 0.125, -2.875,
                              -1.75, -3.0, 0.875, 2.375, 0.5, 0.125, -0.625, 2.75, -1.875, 0.25, -0.25, 0.0,
                              -0.5, -2.125]),
    # batch norm
    "bn_x": ([4, 3, 2, 2], [-0.375, -3.0, -0.5, 3.0, -0.375, 0.125, -2.125, -1.5, 2.625, -3.0, 2.875, -0.75,
                            -1.0, -0.125, -2.5, 0.125, 0.0, 1.625, -2.5, -0.125, 0.375, 3.0, -0.875, -2.625,
                            -0.875, -2.25, -2.625, 2.25, -0.75, 2.0, -1.875, -1.125, -0.875, 0.375, 1.0, -0.5,
                            -1.5, -0.125, 0.375, -2.875, 3.0, 2.0, 0.125, 1.375, 1.375, -1.375, 2.75, -2.375]),
    "bn_rm": ([3], [0.125, -0.25, 0.375]),
    "bn_rv": ([3], [1.0, 0.5, 2.0]),
    "bn_w": ([3], [1.5, 0.5, -1.0]),
    "bn_b": ([3], [0.125, 0.25, -0.375]),
    # group norm of bn_x as [4, 6, 2] in 2 groups; RMS norm of bn_x as [12, 4]
    "gn_w": ([6], [1.5, -0.5, 0.75, 1.0, 2.0, -1.25]),
    "gn_b": ([6], [0.125, -0.25, 0.0, 0.5, -0.375, 1.0]),
    "rms_w": ([4], [0.5, -1.5, 1.0, 2.25]),
    "bn2_x": ([5, 3], [-1.625, 1.25, 1.5, -1.0, 0.25, 1.875, -1.625, -1.0, -0.75, 1.75, 1.25, 0.625, 0.25,
                       0.375, 0.0]),
    # losses
    "ce": ([4, 5], [2.875, 2.875, 2.125, -1.0, 0.125, 2.125, -1.125, -0.625, 0.75, 1.375, 2.25, 0.125, -2.125,
                    -1.75, 2.125, -1.75, -2.5, -1.375, 1.0, 0.875]),
    "ce_t": ([4], [1.0, 0.0, 4.0, 2.0]),
    "ce_w": ([5], [0.5, 2.0, 1.0, 0.25, 3.0]),
    "ce_ti": ([4], [1.0, -100.0, 4.0, 2.0]),  # -100: ignored
    "ce_big": ([2, 3], [1000.0, -1000.0, 0.0, -500.0, 500.0, 499.0]),
    "ce_big_t": ([2], [1.0, 2.0]),
    "mse_a": ([2, 3], [-0.25, 1.5, 0.625, 1.5, 1.375, -1.0]),
    "mse_b": ([2, 3], [-0.5, -0.125, -1.375, -0.625, 0.625, -1.375]),
    # |logits| up to 100: confidently right (loss 0) and confidently wrong (loss 100)
    "bce_x": ([2, 5], [-100.0, -100.0, -20.0, -1.0, 0.0, 0.5, 3.0, 20.0, 100.0, 100.0]),
    "bce_y": ([2, 5], [0.0, 1.0, 1.0, 0.25, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]),
    # log-probabilities (not normalised: any input) against a distribution with a 0, or log-probabilities
    "kl_x": ([2, 3], [-1.375, -0.75, -1.5, -2.0, -0.5, -1.25]),
    "kl_t": ([2, 3], [0.25, 0.75, 0.0, 0.5, 0.125, 0.375]),
    "kl_lt": ([2, 3], [-1.5, -0.25, -2.0, -0.75, -1.0, -1.125]),
    # indexing
    "src": ([3, 4], [-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5]),
    "idx0": ([3], [2.0, 0.0, 2.0]),
    "idx1": ([2], [3.0, 1.0]),
    "gidx1": ([3, 3], [0.0, 0.0, 3.0, 1.0, 2.0, 0.0, 3.0, 3.0, 3.0]),
    "gidx0": ([2, 4], [2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0]),
    "cat_b": ([1, 4], [9.0, 8.0, 7.0, 6.0]),
    "cat_c": ([3, 2], [-9.0, -8.0, -7.0, -6.0, -5.0, -4.0]),
}


def t(name):
    shape, values = INPUTS[name]
    return torch.tensor(values, dtype=torch.float32).reshape(shape)


def out_cases():
    """(name, tensor) pairs: what the C++ test must reproduce."""
    c = []
    ew, pos, big = t("ew"), t("pos"), t("big")
    # elementwise functions
    c += [("neg_ew", -ew), ("exp_ew", torch.exp(ew)), ("abs_ew", torch.abs(ew)), ("relu_ew", F.relu(ew)),
          ("leaky_relu_ew", F.leaky_relu(ew)), ("leaky_relu02_ew", F.leaky_relu(ew, 0.2)),
          ("sigmoid_ew", torch.sigmoid(ew)), ("tanh_ew", torch.tanh(ew)),
          ("gelu_ew", F.gelu(ew, approximate="none")),
          ("softplus_ew", F.softplus(ew)), ("softplus_b2_ew", F.softplus(ew, beta=2.0)),
          ("softplus_b2_t3_ew", F.softplus(ew, beta=2.0, threshold=3.0)),
          ("clamp_ew", torch.clamp(ew, -1.0, 0.5)), ("clamp_lo_ew", torch.clamp(ew, min=-1.0)),
          ("clamp_hi_ew", torch.clamp(ew, max=0.5)),
          ("pow2_ew", torch.pow(ew, 2.0)), ("pow3_ew", torch.pow(ew, 3.0)),
          ("add_s_ew", ew + 1.5), ("sub_s_ew", ew - 0.25), ("rsub_s_ew", 2.0 - ew), ("mul_s_ew", ew * -3.0),
          ("div_s_ew", ew / 4.0)]
    c += [("elu_ew", F.elu(ew)), ("elu05_ew", F.elu(ew, 0.5)), ("selu_ew", F.selu(ew)), ("silu_ew", F.silu(ew)),
          ("mish_ew", F.mish(ew)), ("hardswish_ew", F.hardswish(ew)), ("hardsigmoid_ew", F.hardsigmoid(ew)),
          ("prelu_ew", F.prelu(ew, t("prelu_w"))), ("prelu1_ew", F.prelu(ew, torch.tensor([0.25])))]
    c += [("log_pos", torch.log(pos)), ("sqrt_pos", torch.sqrt(pos)), ("pow05_pos", torch.pow(pos, 0.5)),
          ("powm15_pos", torch.pow(pos, -1.5)), ("rdiv_pos", 2.0 / pos)]
    c += [("sigmoid_big", torch.sigmoid(big)), ("tanh_big", torch.tanh(big)), ("softplus_big", F.softplus(big)),
          ("gelu_big", F.gelu(big)), ("exp_neg_big", torch.exp(-torch.abs(big))),
          ("elu_big", F.elu(big)), ("selu_big", F.selu(big)), ("silu_big", F.silu(big)), ("mish_big", F.mish(big)),
          ("hardswish_big", F.hardswish(big)), ("hardsigmoid_big", F.hardsigmoid(big))]
    # broadcasting binary ops
    a, b = t("a"), t("b")
    c += [("add_ab", a + b), ("sub_ab", a - b), ("mul_ab", a * b), ("div_ab", a / b),
          ("maximum_ab", torch.maximum(a, b)), ("minimum_ab", torch.minimum(a, b)),
          ("eq_ab", (a == b).float()), ("ne_ab", (a != b).float()), ("lt_ab", (a < b).float()),
          ("le_ab", (a <= b).float()), ("gt_ab", (a > b).float()), ("ge_ab", (a >= b).float()),
          ("where_ab", torch.where(a > 0, a, b)),
          ("masked_fill_ab", (a + b).masked_fill(b < 0, -7.5))]
    # reductions
    r, ties = t("r"), t("ties")
    c += [("sum_all_r", r.sum()), ("sum_1_r", r.sum(1)), ("sum_02k_r", r.sum((0, 2), keepdim=True)),
          ("sum_m1_r", r.sum(-1)),
          ("mean_all_r", r.mean()), ("mean_m1_r", r.mean(-1)), ("mean_01k_r", r.mean((0, 1), keepdim=True)),
          ("max_all_r", r.max()), ("max_1_r", r.max(1).values), ("max_2k_r", r.max(2, keepdim=True).values),
          ("min_all_r", r.min()), ("min_0_r", r.min(0).values), ("min_2k_r", r.min(2, keepdim=True).values),
          ("amax_12_r", torch.amax(r, (1, 2))), ("amin_02k_r", torch.amin(r, (0, 2), keepdim=True)),
          ("argmax_all_r", r.argmax().float()), ("argmin_all_r", r.argmin().float()),
          ("argmax_1_r", r.argmax(1).float()), ("argmin_2k_r", r.argmin(2, keepdim=True).float()),
          ("argmax_0_r", r.argmax(0).float()),
          ("argmax_1_ties", ties.argmax(1).float()), ("argmin_1_ties", ties.argmin(1).float()),
          ("max_1_ties", ties.max(1).values)]
    # sums over a long dim that is not the innermost (accumulation precision) and over empty dims
    c += [("sum_0_long", torch.full((1000000, 2), 0.1).sum(0)),
          ("sum_0_empty", torch.zeros(0, 3).sum(0, keepdim=True)),
          ("sum_1_empty", torch.zeros(2, 0).sum(1)),
          ("sum_all_empty", torch.zeros(0).sum())]
    # matmul
    mm_a, mm_b, bmm_a, bmm_b, bc_a, bc_b = t("mm_a"), t("mm_b"), t("bmm_a"), t("bmm_b"), t("bc_a"), t("bc_b")
    c += [("mm", mm_a @ mm_b),
          ("mm_bmm", bmm_a @ bmm_b),                       # [2,3,4] @ [4,5]
          ("mm_broadcast", bc_a @ bc_b),                    # [2,1,3,4] @ [3,4,2] -> [2,3,3,2]
          ("mm_at_b", mm_b.t() @ mm_a.t()),                 # [2,4] @ [4,3] from transposed views
          ("mm_tt", bmm_b.t() @ bmm_a[0].t()),              # [5,4] @ [4,3]
          ("mm_batch_t", bmm_a.transpose(-1, -2) @ bmm_a),  # [2,4,3] @ [2,3,4]
          ("mm_vec_mat", mm_a[0] @ mm_b),                   # [4] @ [4,2]
          ("mm_mat_vec", mm_a @ mm_b[:, 1]),                # [3,4] @ [4]
          ("mm_dot", mm_a[1] @ mm_a[2])]
    # softmax / log_softmax
    sm, sm_big = t("sm"), t("sm_big")
    c += [("softmax_1_sm", F.softmax(sm, 1)), ("log_softmax_1_sm", F.log_softmax(sm, 1)),
          ("softmax_0_sm", F.softmax(sm, 0)), ("log_softmax_m1_sm", F.log_softmax(sm, -1)),
          ("softmax_big", F.softmax(sm_big, 1)), ("log_softmax_big", F.log_softmax(sm_big, 1))]
    # conv2d
    cx, cw, cb, c2x, c2w, dww = t("conv_x"), t("conv_w"), t("conv_b"), t("conv2_x"), t("conv2_w"), t("dw_w")
    c += [("conv_grouped", F.conv2d(cx, cw, cb, stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)),
          ("conv_pad1", F.conv2d(c2x, c2w, None, padding=1)),
          ("conv_plain_bias", F.conv2d(c2x, c2w, t("conv_b")[:3])),
          ("conv_depthwise", F.conv2d(cx, dww, None, stride=2, groups=4)),
          ("convT_grouped", F.conv_transpose2d(cx, cw.reshape(4, 3, 3, 2), cb, stride=(2, 1), padding=(1, 0),
                                               output_padding=(1, 0), dilation=(1, 2), groups=2)),
          ("convT_s2p1op1", F.conv_transpose2d(c2x, c2w.reshape(2, 3, 3, 3), None, stride=2, padding=1,
                                               output_padding=1)),
          ("conv1d_s2p1d2g2", F.conv1d(cx.reshape(2, 4, 30), cw.reshape(6, 2, 6)[:, :, :3], cb, stride=2, padding=1,
                                       dilation=2, groups=2)),
          ("up_nearest_x2", F.interpolate(c2x, scale_factor=2, mode="nearest")),
          ("up_bilinear_x2", F.interpolate(c2x, scale_factor=2, mode="bilinear", align_corners=False)),
          ("up_bilinear_x3_corners", F.interpolate(c2x, scale_factor=3, mode="bilinear", align_corners=True)),
          ("zero_pad_1203", F.pad(c2x, (1, 2, 0, 3)))]
    # pooling
    px = t("pool_x")
    c += [("maxpool_k3s2p1", F.max_pool2d(px, 3, 2, 1)),
          ("maxpool_k2", F.max_pool2d(px, 2)),
          ("maxpool_k23s12p11", F.max_pool2d(px, (2, 3), (1, 2), (1, 1))),
          ("avgpool_k3s2p1_inc", F.avg_pool2d(px, 3, 2, 1, count_include_pad=True)),
          ("avgpool_k3s2p1_exc", F.avg_pool2d(px, 3, 2, 1, count_include_pad=False)),
          ("avgpool_k23s12p11_inc", F.avg_pool2d(px, (2, 3), (1, 2), (1, 1), count_include_pad=True)),
          ("avgpool_k23s12p11_exc", F.avg_pool2d(px, (2, 3), (1, 2), (1, 1), count_include_pad=False)),
          ("avgpool_k2", F.avg_pool2d(px, 2)),
          ("adaptive_max_3x2", F.adaptive_max_pool2d(px, (3, 2))),  # overlapping windows
          ("adaptive_avg_3x2", F.adaptive_avg_pool2d(px, (3, 2))),
          ("adaptive_avg_1x1", F.adaptive_avg_pool2d(px, 1)),
          ("maxpool1d_k3s2p1", F.max_pool1d(px.reshape(1, 10, 5), 3, 2, 1)),
          ("avgpool1d_k2", F.avg_pool1d(px.reshape(1, 10, 5), 2))]
    # batch norm: training updates the running buffers in place
    bx = t("bn_x")
    rm, rv = t("bn_rm"), t("bn_rv")
    y = F.batch_norm(bx, rm, rv, t("bn_w"), t("bn_b"), training=True, momentum=0.1, eps=1e-5)
    c += [("bn_train", y), ("bn_train_rm", rm), ("bn_train_rv", rv)]
    c += [("bn_eval", F.batch_norm(bx, t("bn_rm"), t("bn_rv"), t("bn_w"), t("bn_b"), training=False, eps=1e-5))]
    b2 = t("bn2_x")
    rm2, rv2 = torch.zeros(3), torch.ones(3)
    y2 = F.batch_norm(b2, rm2, rv2, None, None, training=True, momentum=0.2, eps=1e-3)
    c += [("bn2_train", y2), ("bn2_train_rm", rm2), ("bn2_train_rv", rv2),
          ("bn2_eval", F.batch_norm(b2, rm2, rv2, None, None, training=False, eps=1e-3)),
          ("bn2_nostats", F.batch_norm(b2, None, None, None, None, training=True, eps=1e-5))]
    # group and instance norm (training updates the running buffers in place, with the batch's
    # mean of the instances' statistics), and RMS norm, which torch 1.13 lacks: its formula in double
    c += [("gn_2groups", F.group_norm(bx.reshape(4, 6, 2), 2, t("gn_w"), t("gn_b"), eps=1e-5)),
          ("gn_1group", F.group_norm(bx, 1, None, None, eps=1e-3))]
    rm, rv = t("bn_rm"), t("bn_rv")
    y = F.instance_norm(bx, rm, rv, t("bn_w"), t("bn_b"), use_input_stats=True, momentum=0.1, eps=1e-5)
    c += [("in_train", y), ("in_train_rm", rm), ("in_train_rv", rv),
          ("in_eval", F.instance_norm(bx, t("bn_rm"), t("bn_rv"), t("bn_w"), t("bn_b"), use_input_stats=False,
                                      eps=1e-5))]
    rx = bx.reshape(12, 4).double()
    rms = rx / torch.sqrt(rx.pow(2).mean(-1, keepdim=True) + 1e-6) * t("rms_w").double()
    c += [("rms_affine", rms.float())]
    # losses
    ce, ce_t = t("ce"), t("ce_t").long()
    for red in ("mean", "sum", "none"):
        c += [(f"ce_{red}", F.cross_entropy(ce, ce_t, reduction=red)),
              (f"ce_ls_{red}", F.cross_entropy(ce, ce_t, reduction=red, label_smoothing=0.1)),
              (f"nll_{red}", F.nll_loss(F.log_softmax(ce, 1), ce_t, reduction=red)),
              (f"nll_raw_{red}", F.nll_loss(ce, ce_t, reduction=red)),
              (f"mse_{red}", F.mse_loss(t("mse_a"), t("mse_b"), reduction=red)),
              (f"bce_{red}", F.binary_cross_entropy_with_logits(t("bce_x"), t("bce_y"), reduction=red))]
    # class weights, ignored targets, the regression losses, KL divergence, BCE's pos_weight
    ce_w, ce_ti = t("ce_w"), t("ce_ti").long()
    a, b = t("mse_a"), t("mse_b")
    for red in ("mean", "sum", "none"):
        c += [(f"ce_w_{red}", F.cross_entropy(ce, ce_t, weight=ce_w, reduction=red)),
              (f"ce_w_ls_ign_{red}", F.cross_entropy(ce, ce_ti, weight=ce_w, reduction=red, label_smoothing=0.1)),
              (f"ce_ls_ign_{red}", F.cross_entropy(ce, ce_ti, reduction=red, label_smoothing=0.1)),
              (f"nll_w_ign_{red}", F.nll_loss(F.log_softmax(ce, 1), ce_ti, weight=ce_w, reduction=red)),
              (f"l1_{red}", F.l1_loss(a, b, reduction=red)),
              (f"smooth_l1_{red}", F.smooth_l1_loss(a, b, reduction=red, beta=0.5)),
              (f"huber_{red}", F.huber_loss(a, b, reduction=red, delta=0.5)),
              (f"kl_{red}", F.kl_div(t("kl_x"), t("kl_t"), reduction=red)),
              (f"kl_log_{red}", F.kl_div(t("kl_x"), t("kl_lt"), reduction=red, log_target=True)),
              (f"bce_pw_{red}", F.binary_cross_entropy_with_logits(t("bce_x"), t("bce_y"), reduction=red,
                                                                   pos_weight=torch.tensor(3.0)))]
    c += [("kl_batchmean", F.kl_div(t("kl_x"), t("kl_t"), reduction="batchmean"))]
    c += [("ce_big_none", F.cross_entropy(t("ce_big"), t("ce_big_t").long(), reduction="none")),
          ("ce_big_ls", F.cross_entropy(t("ce_big"), t("ce_big_t").long(), reduction="none", label_smoothing=0.1))]
    # indexing and joining
    src = t("src")
    c += [("index_select_0", torch.index_select(src, 0, t("idx0").long())),
          ("index_select_1", torch.index_select(src, 1, t("idx1").long())),
          ("gather_1", torch.gather(src, 1, t("gidx1").long())),
          ("gather_0", torch.gather(src, 0, t("gidx0").long())),
          ("concat_0", torch.cat([src, t("cat_b")], 0)),
          ("concat_1", torch.cat([src, t("cat_c"), src], 1)),
          ("stack_0", torch.stack([src, src * 2], 0)),
          ("stack_1", torch.stack([src, src * 2], 1)),
          ("stack_2", torch.stack([src, src * 2], 2))]
    return c


# ---- C++ emission ---------------------------------------------------------------------------
def fmt(v):
    if math.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    if math.isnan(v):
        raise ValueError("NaN in reference data")
    s = "%.9g" % v
    if "." not in s and "e" not in s:
        s += ".0"
    return s + "f"


def emit(name, tensor):
    tensor = tensor.detach().to(torch.float32).contiguous()
    shape = ", ".join(str(d) for d in tensor.shape)
    vals = [fmt(float(v)) for v in tensor.reshape(-1).tolist()]
    head = f"const Ref {name}{{{{{shape}}}, {{"
    lines, line = [], head
    for i, v in enumerate(vals):
        piece = v + (", " if i + 1 < len(vals) else "")
        if len(line) + len(piece) > 110:
            lines.append(line.rstrip())
            line = "    "
        line += piece
    lines.append(line + "}};")
    return "\n".join(lines)


def block():
    out = ["// BEGIN GENERATED by tests/reference/gen_forward_refs.py (PyTorch %s); do not edit by hand."
           % torch.__version__,
           "// clang-format off",
           "namespace in {"]
    out += [emit(k, t(k)) for k in INPUTS]
    out += ["}  // namespace in", "namespace ref {"]
    names = set()
    for name, tensor in out_cases():
        assert name not in names, name
        names.add(name)
        out.append(emit(name, tensor))
    out += ["}  // namespace ref", "// clang-format on", "// END GENERATED"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    refblock.main(__doc__, block)
