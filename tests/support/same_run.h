#pragma once
// Whether a resumed run ended as an uninterrupted one: the same checkpoint tensors bit for bit,
// and run logs with the same events, once each, with the same figures (timings aside). Each
// returns "" when they agree, else the first difference, for the core and the CLI suites alike.
#include <filesystem>
#include <string>

#include "io/safetensors.h"
#include "session/run_log.h"

namespace plexus::testing {

inline std::string tensor_difference(const std::filesystem::path& a, const std::filesystem::path& b) {
  const io::SafetensorsFile fa = io::load_safetensors(a), fb = io::load_safetensors(b);
  if (fa.tensors.size() != fb.tensors.size())
    return a.string() + " has " + std::to_string(fa.tensors.size()) + " tensors, " + b.string() + " " +
           std::to_string(fb.tensors.size());
  for (const auto& [name, t] : fa.tensors) {
    const Tensor* u = fb.find(name);
    if (!u) return name + " is missing in " + b.string();
    if (t.to_vector() != u->to_vector()) return name + " differs between " + a.string() + " and " + b.string();
  }
  return "";
}

inline std::string log_difference(const std::filesystem::path& a, const std::filesystem::path& b) {
  const session::RunRecord ra = session::read_run(a), rb = session::read_run(b);
  const auto differs = [&](const std::string& what, auto x, auto y) {
    return what + ": " + std::to_string(x) + " in " + a.string() + ", " + std::to_string(y) + " in " + b.string();
  };
  if (ra.status != rb.status) return "the runs ended " + to_string(ra.status) + " and " + to_string(rb.status);
  if (ra.batch_lines != rb.batch_lines) return differs("batch lines", ra.batch_lines, rb.batch_lines);
  if (ra.batches.size() != rb.batches.size()) return differs("batch points", ra.batches.size(), rb.batches.size());
  for (size_t i = 0; i < ra.batches.size(); ++i) {
    const train::BatchEnd &x = ra.batches[i], &y = rb.batches[i];
    const std::string at = "batch point " + std::to_string(i) + " (epoch " + std::to_string(x.epoch) + ", batch " +
                           std::to_string(x.batch) + ")";
    if (x.epoch != y.epoch || x.batch != y.batch) return at + ": epoch or batch differs";
    if (x.loss != y.loss) return differs(at + " loss", x.loss, y.loss);
    if (x.running_loss != y.running_loss) return differs(at + " running_loss", x.running_loss, y.running_loss);
    if (x.running_accuracy != y.running_accuracy)
      return differs(at + " running_accuracy", x.running_accuracy, y.running_accuracy);
    if (x.lr != y.lr) return differs(at + " lr", x.lr, y.lr);
  }
  if (ra.epochs.size() != rb.epochs.size()) return differs("epoch lines", ra.epochs.size(), rb.epochs.size());
  for (size_t i = 0; i < ra.epochs.size(); ++i) {
    const train::EpochEnd &x = ra.epochs[i], &y = rb.epochs[i];
    const std::string at = "epoch " + std::to_string(x.epoch);
    if (x.epoch != y.epoch) return differs("epoch numbers", x.epoch, y.epoch);
    if (x.train_loss != y.train_loss) return differs(at + " train_loss", x.train_loss, y.train_loss);
    if (x.train_accuracy != y.train_accuracy)
      return differs(at + " train_accuracy", x.train_accuracy, y.train_accuracy);
    if (x.eval_loss != y.eval_loss) return differs(at + " eval_loss", x.eval_loss, y.eval_loss);
    if (x.eval_accuracy != y.eval_accuracy) return differs(at + " eval_accuracy", x.eval_accuracy, y.eval_accuracy);
    if (x.lr != y.lr) return differs(at + " lr", x.lr, y.lr);
  }
  if (ra.test.has_value() != rb.test.has_value()) return "one run has test figures, the other not";
  if (ra.test && ra.test->eval_loss != rb.test->eval_loss)
    return differs("test loss", ra.test->eval_loss, rb.test->eval_loss);
  return "";
}

}  // namespace plexus::testing
