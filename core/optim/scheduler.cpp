#include "optim/scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "util/error.h"
#include "util/text.h"

namespace plexus::optim {
namespace {

void check(bool ok, const char* who, const std::string& what) {
  if (!ok) throw ValueError(std::string(who) + ": " + what);
}

}  // namespace

LRScheduler::LRScheduler(Optimizer& opt) : opt_(&opt) {}

void LRScheduler::start() {
  base_lrs_.clear();
  for (ParamGroup& g : opt_->param_groups()) {
    if (!g.initial_lr) g.initial_lr = g.lr;
    base_lrs_.push_back(*g.initial_lr);
  }
  set_epoch(0);
}

void LRScheduler::step() { set_epoch(last_epoch_ + 1); }

void LRScheduler::set_epoch(int64_t epoch) {
  if (epoch < 0) throw ValueError("LRScheduler: epoch must be >= 0, got " + std::to_string(epoch));
  std::vector<ParamGroup>& groups = opt_->param_groups();
  if (groups.size() != base_lrs_.size())
    throw ValueError("LRScheduler: the optimizer had " + std::to_string(base_lrs_.size()) +
                     " parameter groups when this scheduler was made and has " + std::to_string(groups.size()) +
                     " now; make the scheduler after adding every group");
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(lr_at(epoch, base));
  for (size_t i = 0; i < groups.size(); ++i) groups[i].lr = lrs[i];
  last_lr_ = std::move(lrs);
  last_epoch_ = epoch;
}

// ---- StepLR ------------------------------------------------------------------------------
StepLR::StepLR(Optimizer& opt, int64_t step_size, double gamma)
    : LRScheduler(opt), step_size_(step_size), gamma_(gamma) {
  check(step_size >= 1, "StepLR", "step_size must be >= 1, got " + std::to_string(step_size));
  check(gamma > 0 && std::isfinite(gamma), "StepLR", "gamma must be finite and > 0, got " + shortest_text(gamma));
  start();
}

double StepLR::lr_at(int64_t epoch, double base_lr) const {
  return base_lr * std::pow(gamma_, double(epoch / step_size_));
}

// ---- MultiStepLR ---------------------------------------------------------------------------
MultiStepLR::MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(opt), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  check(milestones_.empty() || milestones_.front() >= 0, "MultiStepLR", "milestones must be >= 0");
  check(gamma > 0 && std::isfinite(gamma), "MultiStepLR", "gamma must be finite and > 0, got " + shortest_text(gamma));
  start();
}

double MultiStepLR::lr_at(int64_t epoch, double base_lr) const {
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base_lr * std::pow(gamma_, double(passed));
}

// ---- ExponentialLR -------------------------------------------------------------------------
ExponentialLR::ExponentialLR(Optimizer& opt, double gamma) : LRScheduler(opt), gamma_(gamma) {
  check(gamma > 0 && std::isfinite(gamma), "ExponentialLR", "gamma must be finite and > 0, got " + shortest_text(gamma));
  start();
}

double ExponentialLR::lr_at(int64_t epoch, double base_lr) const { return base_lr * std::pow(gamma_, double(epoch)); }

// ---- CosineAnnealingLR ---------------------------------------------------------------------
CosineAnnealingLR::CosineAnnealingLR(Optimizer& opt, int64_t T_max, double eta_min)
    : LRScheduler(opt), t_max_(T_max), eta_min_(eta_min) {
  check(T_max >= 1, "CosineAnnealingLR", "T_max must be >= 1, got " + std::to_string(T_max));
  check(eta_min >= 0 && std::isfinite(eta_min), "CosineAnnealingLR",
        "eta_min must be finite and >= 0, got " + shortest_text(eta_min));
  start();
}

double CosineAnnealingLR::lr_at(int64_t epoch, double base_lr) const {
  return eta_min_ + (base_lr - eta_min_) * (1 + std::cos(std::numbers::pi * double(epoch) / double(t_max_))) / 2;
}

// ---- LinearWarmup --------------------------------------------------------------------------
LinearWarmup::LinearWarmup(Optimizer& opt, int64_t warmup_steps, double start_factor)
    : LRScheduler(opt), warmup_steps_(warmup_steps), start_factor_(start_factor) {
  check(warmup_steps >= 1, "LinearWarmup", "warmup_steps must be >= 1, got " + std::to_string(warmup_steps));
  check(start_factor > 0 && start_factor <= 1, "LinearWarmup",
        "start_factor must be in (0, 1], got " + shortest_text(start_factor));
  start();
}

double LinearWarmup::lr_at(int64_t epoch, double base_lr) const {
  // The order of operations of torch's LinearLR._get_closed_form_lr.
  return base_lr * (start_factor_ + (1.0 - start_factor_) * double(std::min(warmup_steps_, epoch)) /
                                        double(warmup_steps_));
}

std::unique_ptr<LRScheduler> LinearWarmup::then(Optimizer& opt, int64_t warmup_steps, double start_factor,
                                                std::shared_ptr<LRScheduler> after) {
  auto warm = std::make_shared<LinearWarmup>(opt, warmup_steps, start_factor);
  return std::make_unique<SequentialLR>(opt, std::vector<std::shared_ptr<LRScheduler>>{warm, std::move(after)},
                                        std::vector<int64_t>{warmup_steps});
}

// ---- LinearLR ------------------------------------------------------------------------------
LinearLR::LinearLR(Optimizer& opt, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(opt), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  check(start_factor >= 0 && start_factor <= 1, "LinearLR",
        "start_factor must be in [0, 1], got " + shortest_text(start_factor));
  check(end_factor >= 0 && end_factor <= 1, "LinearLR",
        "end_factor must be in [0, 1], got " + shortest_text(end_factor));
  check(total_iters >= 1, "LinearLR", "total_iters must be >= 1, got " + std::to_string(total_iters));
  start();
}

double LinearLR::lr_at(int64_t epoch, double base_lr) const {
  return base_lr * (start_factor_ + (end_factor_ - start_factor_) * double(std::min(total_iters_, epoch)) /
                                        double(total_iters_));
}

// ---- OneCycleLR ----------------------------------------------------------------------------
OneCycleLR::OneCycleLR(Optimizer& opt, int64_t total_steps, double pct_start, double div_factor,
                       double final_div_factor)
    : LRScheduler(opt),
      total_steps_(total_steps),
      pct_start_(pct_start),
      div_factor_(div_factor),
      final_div_factor_(final_div_factor) {
  check(total_steps >= 2, "OneCycleLR", "needs at least 2 steps, got " + std::to_string(total_steps));
  check(pct_start > 0 && pct_start < 1, "OneCycleLR", "pct_start must be in (0, 1), got " + shortest_text(pct_start));
  check(div_factor > 0 && std::isfinite(div_factor), "OneCycleLR",
        "div_factor must be finite and > 0, got " + shortest_text(div_factor));
  check(final_div_factor > 0 && std::isfinite(final_div_factor), "OneCycleLR",
        "final_div_factor must be finite and > 0, got " + shortest_text(final_div_factor));
  check(pct_start * double(total_steps) - 1 > 0, "OneCycleLR",
        "pct_start × total_steps must exceed 1 (" + shortest_text(pct_start) + " × " + std::to_string(total_steps) +
            "): the rise needs a step");
  set_per_step(true);
  start();
}

double OneCycleLR::lr_at(int64_t step, double base_lr) const {
  // torch's phases and _annealing_cos, operation for operation.
  const double initial = base_lr / div_factor_, min_lr = initial / final_div_factor_;
  const double rise_end = pct_start_ * double(total_steps_) - 1, fall_end = double(total_steps_ - 1);
  const double s = double(std::min(step, total_steps_ - 1));
  const auto cosine = [](double from, double to, double pct) {
    return to + (from - to) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
  };
  if (s <= rise_end) return cosine(initial, base_lr, s / rise_end);
  return cosine(base_lr, min_lr, (s - rise_end) / (fall_end - rise_end));
}

// ---- SequentialLR --------------------------------------------------------------------------
SequentialLR::SequentialLR(Optimizer& opt, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(opt), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  check(!schedulers_.empty(), "SequentialLR", "needs at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    check(schedulers_[i] != nullptr, "SequentialLR", "scheduler " + std::to_string(i) + " is null");
    check(&schedulers_[i]->optimizer() == &opt, "SequentialLR",
          "scheduler " + std::to_string(i) + " belongs to another optimizer");
  }
  check(milestones_.size() + 1 == schedulers_.size(), "SequentialLR",
        "expected " + std::to_string(schedulers_.size() - 1) + " milestones for " +
            std::to_string(schedulers_.size()) + " schedulers, got " + std::to_string(milestones_.size()));
  for (size_t i = 0; i < milestones_.size(); ++i)
    check(milestones_[i] > (i ? milestones_[i - 1] : 0), "SequentialLR",
          "milestones must be > 0 and strictly increasing (milestone " + std::to_string(i) + " is " +
              std::to_string(milestones_[i]) + ")");
  start();
}

double SequentialLR::lr_at(int64_t epoch, double base_lr) const {
  const size_t k = size_t(std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin());
  return schedulers_[k]->lr_at(k == 0 ? epoch : epoch - milestones_[k - 1], base_lr);
}

}  // namespace plexus::optim
