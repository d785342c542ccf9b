#!/usr/bin/python3
"""Reference values for tests/core/optim/test_optim.cpp, computed with PyTorch (float32, CPU).

The test does not run Python: this script prints a C++ block with the literal inputs, the
optimizer configurations and PyTorch's results, which is pasted into test_optim.cpp between
the "BEGIN GENERATED" and "END GENERATED" markers (`--write` does that in place):

    /usr/bin/python3 tests/reference/gen_optim_refs.py --write tests/core/optim/test_optim.cpp

Use Debian's PyTorch (python3-torch 1.13, /usr/bin/python3). Inputs are multiples of 1/16
so that their decimal text is exact in both languages; float results are printed with 9
significant digits (round-trips float32), doubles in their shortest exact form.

Option names are the C++ ones: Adam's betas are beta1/beta2, booleans are 0/1.
"""
import math

import refblock  # same folder
import torch

torch.set_default_dtype(torch.float32)

# ---- literal inputs ---------------------------------------------------------------------
# Parameter p0 [2, 3] and its gradient at each of three steps. Element 3 always has a zero
# gradient (weight decay alone moves it); element 4's gradient shrinks in magnitude, so
# AMSGrad's running maximum differs from the second moment.
P0 = ([2, 3], [0.5, -1.25, 2.0, -0.375, 0.0, 1.5])
G0 = [[0.25, -0.5, 1.0, 0.0, -2.0, 0.125],
      [-0.125, -0.75, 0.5, 0.0, 1.5, 0.25],
      [0.0625, 0.25, -0.25, 0.0, -0.5, 0.375]]
# A second parameter p1 [4] for parameter-group tests.
P1 = ([4], [1.0, -0.5, 0.25, -2.0])
G1 = [[0.5, -0.25, 0.0, 1.0],
      [0.25, 0.5, -1.0, -0.5],
      [-0.5, 0.125, 0.75, 0.25]]
STEPS = 3

# (case name, optimizer kind, options). Large eps values make eps placement observable.
CASES = [
    ("sgd_plain", "SGD", {"lr": 0.1}),
    ("sgd_wd", "SGD", {"lr": 0.1, "weight_decay": 0.1}),
    ("sgd_momentum", "SGD", {"lr": 0.1, "momentum": 0.9}),
    ("sgd_dampening", "SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}),
    ("sgd_nesterov", "SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": 1}),
    ("sgd_nesterov_wd", "SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": 1, "weight_decay": 0.2}),
    ("sgd_momentum_wd_maximize", "SGD", {"lr": 0.1, "momentum": 0.5, "weight_decay": 0.1, "maximize": 1}),
    ("sgd_nesterov_maximize", "SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": 1, "maximize": 1}),
    ("sgd_dampening_wd", "SGD", {"lr": 0.2, "momentum": 0.7, "dampening": 0.3, "weight_decay": 0.05}),
    ("adam_default", "Adam", {}),
    ("adam_betas_eps", "Adam", {"lr": 0.1, "beta1": 0.8, "beta2": 0.9, "eps": 0.1}),
    ("adam_wd", "Adam", {"lr": 0.1, "weight_decay": 0.1, "eps": 0.01}),
    ("adam_amsgrad", "Adam", {"lr": 0.1, "beta1": 0.5, "beta2": 0.5, "amsgrad": 1}),
    ("adam_amsgrad_wd_maximize", "Adam",
     {"lr": 0.05, "beta1": 0.6, "beta2": 0.4, "eps": 0.05, "weight_decay": 0.2, "amsgrad": 1, "maximize": 1}),
    ("adam_maximize", "Adam", {"lr": 0.1, "maximize": 1}),
    ("adamw_default", "AdamW", {}),
    ("adamw_wd_eps", "AdamW", {"lr": 0.1, "weight_decay": 0.5, "eps": 0.01}),
    ("adamw_amsgrad_maximize", "AdamW",
     {"lr": 0.1, "beta1": 0.5, "beta2": 0.5, "weight_decay": 0.1, "amsgrad": 1, "maximize": 1}),
    ("adamw_no_wd", "AdamW", {"lr": 0.1, "weight_decay": 0.0, "beta2": 0.9}),
    ("rmsprop_default", "RMSprop", {}),
    ("rmsprop_alpha_eps", "RMSprop", {"lr": 0.1, "alpha": 0.9, "eps": 0.1}),
    ("rmsprop_momentum", "RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("rmsprop_centered", "RMSprop", {"lr": 0.01, "alpha": 0.9, "centered": 1, "eps": 0.01}),
    ("rmsprop_centered_momentum_wd", "RMSprop",
     {"lr": 0.01, "alpha": 0.8, "centered": 1, "momentum": 0.5, "weight_decay": 0.1}),
    ("rmsprop_wd_maximize", "RMSprop", {"lr": 0.01, "weight_decay": 0.2, "maximize": 1}),
    ("adagrad_default", "Adagrad", {}),
    ("adagrad_lr_decay", "Adagrad", {"lr": 0.1, "lr_decay": 0.5}),
    ("adagrad_initial_eps", "Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 0.1}),
    ("adagrad_wd_maximize", "Adagrad", {"lr": 0.1, "weight_decay": 0.1, "maximize": 1, "lr_decay": 0.1}),
]

BOOLS = {"nesterov", "maximize", "amsgrad", "centered"}


def torch_kwargs(opts):
    kw = {}
    for k, v in opts.items():
        if k in ("beta1", "beta2"):
            continue
        kw[k] = bool(v) if k in BOOLS else float(v)
    if "beta1" in opts or "beta2" in opts:
        kw["betas"] = (float(opts.get("beta1", 0.9)), float(opts.get("beta2", 0.999)))
    return kw


def make(kind, params, opts):
    return getattr(torch.optim, kind)(params, **torch_kwargs(opts))


def tensor(spec):
    shape, values = spec
    return torch.tensor(values, dtype=torch.float32).reshape(shape)


def run_case(kind, opts):
    p = tensor(P0).requires_grad_()
    opt = make(kind, [p], opts)
    out = []
    for s in range(STEPS):
        opt.zero_grad(set_to_none=True)
        p.grad = torch.tensor(G0[s]).reshape(P0[0])
        opt.step()
        out.append(p.detach().clone().reshape(-1))
    return torch.stack(out)


def run_groups(kind, opts0, opts1, steps=STEPS):
    """Two groups: p0 with opts0, p1 with opts1 (overrides); both have grads every step."""
    p0 = tensor(P0).requires_grad_()
    p1 = tensor(P1).requires_grad_()
    g1 = {"params": [p1]}
    g1.update(torch_kwargs(opts1))
    opt = make(kind, [{"params": [p0]}, g1], opts0)
    for s in range(steps):
        opt.zero_grad(set_to_none=True)
        p0.grad = torch.tensor(G0[s]).reshape(P0[0])
        p1.grad = torch.tensor(G1[s])
        opt.step()
    return p0.detach().clone(), p1.detach().clone()


def run_skip(kind, opts):
    """p0 and p1 in one group; p1 has no grad at step 2 (index 1): it is skipped."""
    p0 = tensor(P0).requires_grad_()
    p1 = tensor(P1).requires_grad_()
    opt = make(kind, [p0, p1], opts)
    for s in range(STEPS):
        opt.zero_grad(set_to_none=True)  # (1.13's default zeroes grads, which still updates)
        p0.grad = torch.tensor(G0[s]).reshape(P0[0])
        if s != 1:
            p1.grad = torch.tensor(G1[s])
        opt.step()
    return p0.detach().clone(), p1.detach().clone()


# ---- schedulers ----------------------------------------------------------------------------
BASE_LRS = [0.1, 0.5]
EPOCHS = 16


def sched_opt():
    a = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    return torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": BASE_LRS[1]}], lr=BASE_LRS[0])


def lr_sequence(build):
    import warnings
    warnings.simplefilter("ignore")
    opt = sched_opt()
    sched = build(opt)
    out = [list(sched.get_last_lr())]
    for _ in range(EPOCHS - 1):
        opt.step()
        sched.step()
        out.append(list(sched.get_last_lr()))
    return out


S = torch.optim.lr_scheduler
SCHEDULES = [
    ("step_lr", lambda o: S.StepLR(o, step_size=3, gamma=0.5)),
    ("multistep_lr", lambda o: S.MultiStepLR(o, milestones=[5, 2, 9, 5], gamma=0.1)),
    ("exponential_lr", lambda o: S.ExponentialLR(o, gamma=0.9)),
    ("cosine_lr", lambda o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01)),
    ("warmup_lr", lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=4)),
    ("warmup_cosine_lr", lambda o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=3), S.CosineAnnealingLR(o, T_max=6, eta_min=0.001)],
        milestones=[3])),
    ("three_phase_lr", lambda o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.5, total_iters=2), S.StepLR(o, step_size=2, gamma=0.5),
            S.ExponentialLR(o, gamma=0.8)], milestones=[2, 7])),
    ("linear_lr", lambda o: S.LinearLR(o, start_factor=0.5, end_factor=0.2, total_iters=10)),
    # A project's "onecycle" schedule: max_lr = each group's lr, no momentum cycling.
    ("onecycle_lr", lambda o: S.OneCycleLR(o, max_lr=BASE_LRS, total_steps=EPOCHS, pct_start=0.3, div_factor=25.0,
                                           final_div_factor=1e4, anneal_strategy="cos", cycle_momentum=False)),
    # A project's "warmup_linear" schedule over 16 steps: 4 of warm-up from 0.1, then down to 0.05.
    ("warmup_linear_lr", lambda o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=4),
            S.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=EPOCHS - 4)], milestones=[4])),
]

# ReduceLROnPlateau fed the same metrics: the lrs after each step.
PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.93, 0.9, 0.91, 0.8, 0.85, 0.85, 0.86, 0.7999, 0.9, 0.95, 0.97, 0.99, 1.0]
PLATEAUS = [
    ("plateau_min_rel", dict(mode="min", factor=0.5, patience=2, threshold=1e-2, threshold_mode="rel", cooldown=1,
                             min_lr=0.02)),
    ("plateau_max_abs", dict(mode="max", factor=0.1, patience=1, threshold=0.05, threshold_mode="abs", cooldown=0,
                             min_lr=0.0)),
]


def plateau_sequence(kwargs, metrics):
    opt = sched_opt()
    sched = S.ReduceLROnPlateau(opt, **kwargs)
    out = []
    for m in metrics:
        opt.step()
        sched.step(m)
        out.append([g["lr"] for g in opt.param_groups])
    return out


# ---- clipping --------------------------------------------------------------------------------
def clip_case(max_norm, norm_type):
    p0 = tensor(P0).requires_grad_()
    p1 = tensor(P1).requires_grad_()
    p2 = torch.zeros(3, requires_grad=True)  # no grad: skipped
    p0.grad = torch.tensor(G0[0]).reshape(P0[0])
    p1.grad = torch.tensor(G1[0])
    total = torch.nn.utils.clip_grad_norm_([p0, p1, p2], max_norm, norm_type)
    return total.reshape(1), p0.grad.clone(), p1.grad.clone()


CLIPS = [("clip_l2", 1.0, 2.0), ("clip_l2_noop", 100.0, 2.0), ("clip_inf", 0.5, math.inf),
         ("clip_l1", 2.0, 1.0), ("clip_l3", 1.0, 3.0)]


def clip_value_case(clip):
    p0 = tensor(P0).requires_grad_()
    p1 = tensor(P1).requires_grad_()
    p0.grad = torch.tensor(G0[0]).reshape(P0[0])
    p1.grad = torch.tensor(G1[0])
    torch.nn.utils.clip_grad_value_([p0, p1], clip)
    return p0.grad.clone(), p1.grad.clone()


# ---- C++ output ------------------------------------------------------------------------------
def fmt(v):
    if math.isnan(v) or math.isinf(v):
        raise ValueError("non-finite reference value")
    s = "%.9g" % v
    if "." not in s and "e" not in s:
        s += ".0"
    return s + "f"


def fmt_double(v):
    s = repr(float(v))  # the shortest text that reads back as the same double
    if "." not in s and "e" not in s and "inf" not in s:
        s += ".0"
    return s


def wrap(head, items, tail, indent="    "):
    lines, line = [], head
    for i, v in enumerate(items):
        piece = v + (", " if i + 1 < len(items) else "")
        if len(line) + len(piece) > 110:
            lines.append(line.rstrip())
            line = indent
        line += piece
    lines.append(line + tail)
    return "\n".join(lines)


def emit(name, tensor):
    tensor = tensor.detach().to(torch.float32).contiguous()
    shape = ", ".join(str(d) for d in tensor.shape)
    vals = [fmt(float(v)) for v in tensor.reshape(-1).tolist()]
    return wrap(f"const Ref {name}{{{{{shape}}}, {{", vals, "}};")


def emit_opts(opts):
    return "{" + ", ".join('{"%s", %s}' % (k, fmt_double(v)) for k, v in opts.items()) + "}"


GROUP_CASES = [
    # (name, kind, group-0 options (the constructor's), group-1 overrides)
    ("groups_sgd", "SGD", {"lr": 0.1, "momentum": 0.9}, {"lr": 0.01, "momentum": 0.5}),
    ("groups_adam", "Adam", {"lr": 0.1}, {"lr": 0.01, "weight_decay": 0.1, "beta1": 0.5}),
    ("groups_rmsprop", "RMSprop", {"lr": 0.01}, {"lr": 0.05, "centered": 1}),
    # (torch 1.13 fills every group's accumulator with the constructor's
    # initial_accumulator_value, whatever a group says; plexus honours a group's own value, so
    # the override here is of other options)
    ("groups_adagrad", "Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5}, {"lr": 0.2, "lr_decay": 0.5}),
]
SKIP_CASES = [
    ("skip_sgd", "SGD", {"lr": 0.1, "momentum": 0.9}),
    ("skip_adam", "Adam", {"lr": 0.1}),
    ("skip_rmsprop", "RMSprop", {"lr": 0.01, "momentum": 0.5}),
    ("skip_adagrad", "Adagrad", {"lr": 0.1, "lr_decay": 0.5}),
]


def block():
    out = ["// BEGIN GENERATED by tests/reference/gen_optim_refs.py (PyTorch %s); do not edit by hand."
           % torch.__version__,
           "// clang-format off",
           "namespace in {"]
    out.append(emit("p0", tensor(P0)))
    out.append(emit("g0", torch.tensor(G0)))
    out.append(emit("p1", tensor(P1)))
    out.append(emit("g1", torch.tensor(G1)))
    out += ["}  // namespace in", "namespace ref {"]
    # single-parameter cases: p0 after each step, [STEPS, 6]
    for name, kind, opts in CASES:
        out.append(emit(name, run_case(kind, opts)))
    out.append("const std::vector<OptCase> kCases = {")
    for name, kind, opts in CASES:
        out.append(wrap('    {"%s", "%s", ' % (name, kind), [emit_opts(opts), "&" + name], "},", " " * 8))
    out.append("};")
    for name, kind, o0, o1 in GROUP_CASES:
        a, b = run_groups(kind, o0, o1)
        out.append(emit(name + "_p0", a))
        out.append(emit(name + "_p1", b))
    out.append("const std::vector<GroupCase> kGroupCases = {")
    for name, kind, o0, o1 in GROUP_CASES:
        out.append(wrap('    {"%s", "%s", ' % (name, kind),
                        [emit_opts(o0), emit_opts(o1), "&%s_p0" % name, "&%s_p1" % name], "},", " " * 8))
    out.append("};")
    for name, kind, opts in SKIP_CASES:
        a, b = run_skip(kind, opts)
        out.append(emit(name + "_p0", a))
        out.append(emit(name + "_p1", b))
    out.append("const std::vector<SkipCase> kSkipCases = {")
    for name, kind, opts in SKIP_CASES:
        out.append(wrap('    {"%s", "%s", ' % (name, kind), [emit_opts(opts), "&%s_p0" % name, "&%s_p1" % name], "},",
                        " " * 8))
    out.append("};")
    # schedulers: lrs of the two groups at epochs 0 .. EPOCHS-1
    out.append("const double kBaseLrs[2] = {%s, %s};" % tuple(fmt_double(v) for v in BASE_LRS))
    for name, build in SCHEDULES:
        seq = lr_sequence(build)
        items = ["{%s, %s}" % (fmt_double(a), fmt_double(b)) for a, b in seq]
        out.append(wrap(f"const std::vector<std::array<double, 2>> {name} = {{", items, "};"))
    # clipping: total norm and the two clipped gradients
    for name, max_norm, norm_type in CLIPS:
        total, c0, c1 = clip_case(max_norm, norm_type)
        out.append(emit(name + "_total", total))
        out.append(emit(name + "_g0", c0))
        out.append(emit(name + "_g1", c1))
    c0, c1 = clip_value_case(0.375)
    out.append(emit("clip_value_g0", c0))
    out.append(emit("clip_value_g1", c1))
    # plateau: the metrics, and the two groups' lrs after each step
    out.append(wrap("const std::vector<double> kPlateauMetrics = {", [fmt_double(m) for m in PLATEAU_METRICS], "};"))
    for name, kwargs in PLATEAUS:
        seq = plateau_sequence(kwargs, PLATEAU_METRICS)
        items = ["{%s, %s}" % (fmt_double(a), fmt_double(b)) for a, b in seq]
        out.append(wrap(f"const std::vector<std::array<double, 2>> {name} = {{", items, "};"))
    out += ["}  // namespace ref", "// clang-format on", "// END GENERATED"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    refblock.main(__doc__, block)
