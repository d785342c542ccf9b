#include "data/dataset.h"

#include <cstring>
#include <string>

#include "data/sampling.h"
#include "util/error.h"

namespace plexus::data {
namespace {

Shape prepend(int64_t n, const Shape& s) {
  Shape out{n};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

// A contiguous CPU tensor with no history holding the same values (a copy only if needed).
Tensor plain(const Tensor& t) {
  Tensor d = t.detach();
  return d.is_contiguous() ? d : d.contiguous();
}

// Row `i` of contiguous `source` as a new tensor of shape source.shape[1:].
Tensor copy_row(const Tensor& source, int64_t i) {
  Shape row(source.shape().begin() + 1, source.shape().end());
  Tensor out = empty(row);
  const int64_t n = out.numel();
  if (n) std::memcpy(out.data(), source.data() + i * n, size_t(n) * sizeof(float));
  return out;
}

// Stacks equally shaped tensors into a new [B, ...] tensor; `what` names them in errors.
Tensor stack_copies(const std::vector<Tensor>& parts, const std::vector<int64_t>& indices, const char* what) {
  const Shape& shape = parts.front().shape();
  Tensor out = empty(prepend(int64_t(parts.size()), shape));
  const int64_t n = numel(shape);
  for (size_t b = 0; b < parts.size(); ++b) {
    if (parts[b].shape() != shape)
      throw ShapeError(std::string("Dataset::get_batch: example ") + std::to_string(indices[b]) + " has " + what +
                       " shape " + to_string(parts[b].shape()) + ", but example " + std::to_string(indices[0]) +
                       " has " + to_string(shape) + "; examples of one batch must agree");
    const Tensor p = plain(parts[b]);
    if (n) std::memcpy(out.data() + int64_t(b) * n, p.data(), size_t(n) * sizeof(float));
  }
  return out;
}

}  // namespace

void Dataset::check_index(int64_t index, const char* who) const {
  if (index < 0 || index >= size())
    throw IndexError(std::string(who) + ": index " + std::to_string(index) + " out of range for a dataset of " +
                     std::to_string(size()) + " examples");
}

Example Dataset::get_batch(const std::vector<int64_t>& indices) const {
  if (indices.empty()) throw ValueError("Dataset::get_batch: no indices");
  std::vector<Tensor> inputs, targets;
  inputs.reserve(indices.size());
  targets.reserve(indices.size());
  for (int64_t i : indices) {
    check_index(i, "Dataset::get_batch");
    Example e = get(i);
    if (!e.input.defined() || !e.target.defined())
      throw ValueError("Dataset::get_batch: example " + std::to_string(i) + " has an undefined input or target");
    inputs.push_back(std::move(e.input));
    targets.push_back(std::move(e.target));
  }
  return {stack_copies(inputs, indices, "input"), stack_copies(targets, indices, "target")};
}

Tensor Dataset::target_batch(const std::vector<int64_t>& indices) const { return get_batch(indices).target; }

Tensor gather_rows(const Tensor& source, const std::vector<int64_t>& indices) {
  Shape row(source.shape().begin() + 1, source.shape().end());
  Tensor out = empty(prepend(int64_t(indices.size()), row));
  const int64_t n = numel(row);
  const float* src = source.data();
  float* dst = out.data();
  if (n)
    for (size_t b = 0; b < indices.size(); ++b)
      std::memcpy(dst + int64_t(b) * n, src + indices[b] * n, size_t(n) * sizeof(float));
  return out;
}

// ---- TensorDataset -------------------------------------------------------------------

TensorDataset::TensorDataset(const Tensor& inputs, const Tensor& targets) {
  if (!inputs.defined() || !targets.defined()) throw ValueError("TensorDataset: undefined inputs or targets");
  if (!inputs.device().is_cpu() || !targets.device().is_cpu())
    throw DeviceError("TensorDataset: inputs and targets must be CPU tensors");
  if (inputs.dim() < 1) throw ShapeError("TensorDataset: inputs must be [N, ...], got a scalar");
  if (targets.dim() != 1 && targets.dim() != 2)
    throw ShapeError("TensorDataset: targets must be [N] or [N, k], got " + to_string(targets.shape()));
  if (inputs.size(0) != targets.size(0))
    throw ShapeError("TensorDataset: " + std::to_string(inputs.size(0)) + " inputs " + to_string(inputs.shape()) +
                     " but " + std::to_string(targets.size(0)) + " targets " + to_string(targets.shape()));
  n_ = inputs.size(0);
  // Our own contiguous copies: later in-place changes by the caller cannot reach the dataset.
  inputs_ = inputs.detach().clone();
  targets_ = targets.detach().clone();
  if (!inputs_.is_contiguous()) inputs_ = inputs_.contiguous();
  if (!targets_.is_contiguous()) targets_ = targets_.contiguous();
}

Example TensorDataset::get(int64_t index) const {
  check_index(index, "TensorDataset::get");
  return {copy_row(inputs_, index), copy_row(targets_, index)};
}

Example TensorDataset::get_batch(const std::vector<int64_t>& indices) const {
  for (int64_t i : indices) check_index(i, "TensorDataset::get_batch");
  return {gather_rows(inputs_, indices), gather_rows(targets_, indices)};
}

Tensor TensorDataset::target_batch(const std::vector<int64_t>& indices) const {
  for (int64_t i : indices) check_index(i, "TensorDataset::target_batch");
  return gather_rows(targets_, indices);
}

// ---- Subset ----------------------------------------------------------------------------

Subset::Subset(std::shared_ptr<const Dataset> parent, std::vector<int64_t> indices)
    : parent_(std::move(parent)), indices_(std::move(indices)) {
  if (!parent_) throw ValueError("Subset: no parent dataset");
  const int64_t n = parent_->size();
  for (int64_t i : indices_)
    if (i < 0 || i >= n)
      throw IndexError("Subset: index " + std::to_string(i) + " out of range for a dataset of " + std::to_string(n) +
                       " examples");
}

Example Subset::get(int64_t index) const {
  check_index(index, "Subset::get");
  return parent_->get(indices_[size_t(index)]);
}

std::vector<int64_t> Subset::parent_indices(const std::vector<int64_t>& indices, const char* who) const {
  std::vector<int64_t> mapped;
  mapped.reserve(indices.size());
  for (int64_t i : indices) {
    check_index(i, who);
    mapped.push_back(indices_[size_t(i)]);
  }
  return mapped;
}

Example Subset::get_batch(const std::vector<int64_t>& indices) const {
  return parent_->get_batch(parent_indices(indices, "Subset::get_batch"));
}

Tensor Subset::target_batch(const std::vector<int64_t>& indices) const {
  return parent_->target_batch(parent_indices(indices, "Subset::target_batch"));
}

std::pair<std::shared_ptr<Subset>, std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> dataset,
                                                                         double train_fraction, uint64_t seed) {
  if (!dataset) throw ValueError("random_split: no dataset");
  auto [a, b] = split_indices(dataset->size(), train_fraction, seed);
  return {std::make_shared<Subset>(dataset, std::move(a)), std::make_shared<Subset>(dataset, std::move(b))};
}

}  // namespace plexus::data
