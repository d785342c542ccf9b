#pragma once
// Datasets: indexable collections of (input, target) examples.
//
// Contract for every Dataset:
//  - size() and get()/get_batch() are const and safe to call from several threads at once
//    (the DataLoader calls get_batch from its prefetch thread); datasets are immutable
//    after construction.
//  - get_batch returns freshly allocated tensors the caller owns (never storage shared
//    with the dataset), so transforms may work on them freely.
//  - Class targets are float tensors holding whole numbers (the convention of
//    cross_entropy / nll_loss): a scalar per example, [B] per batch.
#include <cstdint>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace plexus::data {

struct Example {
  Tensor input;
  Tensor target;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // One example: input [...], target [] (a class or value) or [k]. Throws IndexError
  // outside [0, size()).
  virtual Example get(int64_t index) const = 0;
  // Input [B, ...] and target [B, ...] for the given indices, in that order (repeats allowed).
  // The default stacks get(); datasets backed by one contiguous tensor override it with
  // a direct row copy, which is what keeps the DataLoader fast.
  virtual Example get_batch(const std::vector<int64_t>& indices) const;
  // The targets [B, ...] of those examples alone, equal to get_batch(indices).target. The default
  // is just that; datasets whose inputs are costly to read (image files) override it, as do the
  // in-memory ones, so a class histogram never reads an input.
  virtual Tensor target_batch(const std::vector<int64_t>& indices) const;
  // The name of each class, by class index ("T-shirt/top", or a CSV's label text); empty when
  // the dataset has no class names (regression, or plain tensors).
  virtual std::vector<std::string> class_names() const { return {}; }

 protected:
  void check_index(int64_t index, const char* who) const;  // IndexError naming `who`
};

// Examples held in memory: row i of `inputs` [N, ...] with row i of `targets` [N] or [N, k].
// Both are copied into contiguous storage that does not require grad.
class TensorDataset : public Dataset {
 public:
  TensorDataset(const Tensor& inputs, const Tensor& targets);
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override;
  Example get_batch(const std::vector<int64_t>& indices) const override;
  Tensor target_batch(const std::vector<int64_t>& indices) const override;
  const Tensor& inputs() const { return inputs_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor inputs_, targets_;
  int64_t n_ = 0;
};

// A view of some examples of another dataset (e.g. a validation split). Holds the parent.
class Subset : public Dataset {
 public:
  Subset(std::shared_ptr<const Dataset> parent, std::vector<int64_t> indices);  // indices checked
  int64_t size() const override { return int64_t(indices_.size()); }
  Example get(int64_t index) const override;
  Example get_batch(const std::vector<int64_t>& indices) const override;
  Tensor target_batch(const std::vector<int64_t>& indices) const override;
  const std::vector<int64_t>& indices() const { return indices_; }
  const Dataset& parent() const { return *parent_; }
  std::vector<std::string> class_names() const override { return parent_->class_names(); }

 private:
  std::vector<int64_t> parent_indices(const std::vector<int64_t>& indices, const char* who) const;  // checked

  std::shared_ptr<const Dataset> parent_;
  std::vector<int64_t> indices_;
};

// Deterministic random split of any dataset: round(train_fraction * N) examples for the
// first subset, the rest for the second (see split_indices in data/sampling.h).
std::pair<std::shared_ptr<Subset>, std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> dataset,
                                                                         double train_fraction, uint64_t seed);

// Copies rows `indices` of a contiguous tensor [N, ...] into a new tensor [B, ...].
// Indices must already be checked. Used by the in-memory datasets.
Tensor gather_rows(const Tensor& source, const std::vector<int64_t>& indices);

}  // namespace plexus::data
