// What a steady training step must not do on the CPU (issue "Speed"): ask the system for
// tensor memory (the caching pool serves every storage after the first steps) or copy
// tensors nobody asked to copy (a transposed gradient, an operand made contiguous). Counted
// through memory_stats() and hidden_copies() over real steps of the benchmark workloads.
#include "support/check.h"

#include <sstream>
#include <string>
#include <vector>

#include "plexus.h"
#include "train/builtin.h"

using namespace plexus;

namespace {

struct Workload {
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::Optimizer> opt;
  Tensor x, y;  // one batch
};

Workload make(const std::string& name, int64_t batch, bool adam) {
  Generator gen(7);
  Workload w;
  if (name == "mlp1024") {
    auto m = std::make_shared<nn::Sequential>();
    m->add(std::make_shared<nn::Flatten>())
        .add(std::make_shared<nn::Linear>(784, 1024, true, &gen))
        .add(std::make_shared<nn::ReLU>())
        .add(std::make_shared<nn::Linear>(1024, 1024, true, &gen))
        .add(std::make_shared<nn::ReLU>())
        .add(std::make_shared<nn::Linear>(1024, 10, true, &gen));
    w.model = m;
  } else {
    w.model = train::make_builtin_model(name, &gen);
  }
  if (adam) w.opt = std::make_unique<optim::Adam>(w.model->parameters(), optim::AdamOptions{.lr = 1e-3});
  else w.opt = std::make_unique<optim::SGD>(w.model->parameters(), optim::SGDOptions{.lr = 0.1});
  w.x = randn({batch, 1, 28, 28}, &gen);
  std::vector<float> classes(static_cast<size_t>(batch));
  for (float& c : classes) c = float(gen.next_u64() % 10);
  w.y = from_vector(classes, {batch});
  return w;
}

// One step as the benchmark and the Trainer take it; returns the loss.
float step(Workload& w) {
  const Tensor loss = cross_entropy((*w.model)(w.x), w.y);
  const float value = loss.item();
  w.opt->zero_grad();
  loss.backward();
  w.opt->step();
  return value;
}

struct WorkloadRow {
  std::string name;
  std::string model;
  int batch;
  bool adam;
};

std::vector<WorkloadRow> workloads() {
  return {{"MLP 784-128-10, SGD", "mlp", 100, false},
          {"MLP 784-64-10, SGD", "mlp64", 100, false},
          {"LeNet, SGD", "lenet", 100, false},
          {"MLP 784-1024-1024-10, Adam", "mlp1024", 128, true}};
}

}  // namespace

TEST_ROWS(steadyStepAllocatesNoStorageAndCopiesNothing, workloads()) {
  Workload w = make(row.model, row.batch, row.adam);
  for (int i = 0; i < 3; ++i) step(w);  // the pool fills; Adam creates its state

  const MemoryStats before = memory_stats();
  const HiddenCopies copies_before = hidden_copies();
  float first = 0, last = 0;
  for (int i = 0; i < 10; ++i) {
    const float l = step(w);
    if (i == 0) first = l;
    last = l;
  }
  const MemoryStats after = memory_stats();
  const HiddenCopies copies_after = hidden_copies();

  COMPARE(after.system_allocations, before.system_allocations);  // every storage from the pool
  VERIFY(after.allocations > before.allocations);                // (and storages were made)
  COMPARE(after.bytes_in_use, before.bytes_in_use);              // nothing accumulates
  COMPARE(copies_after.copies, copies_before.copies);
  COMPARE(copies_after.elements, copies_before.elements);
  std::ostringstream what;
  what << "loss " << first << " -> " << last << ": the steps did train";
  VERIFY2(last < first, what.str());
}

TEST(copiesAreCounted) {
  // The counter sees what it should: an operand made contiguous for a kernel, and a
  // gradient that aliases another one (x + x hands the same tensor to both inputs).
  const HiddenCopies c0 = hidden_copies();
  const Tensor t = randn({3, 4}).t();
  (void)softmax(t, 1);  // softmax needs contiguous rows
  const HiddenCopies c1 = hidden_copies();
  COMPARE(c1.copies, c0.copies + 1);
  COMPARE(c1.elements, c0.elements + 12);

  const Tensor a = randn({5}).requires_grad_(), b = randn({5}).requires_grad_();
  sum(a + b).backward();  // add's backward gives both inputs the same gradient tensor
  const HiddenCopies c2 = hidden_copies();
  VERIFY(c2.copies >= c1.copies + 1);
  COMPARE(a.grad().to_vector(), std::vector<float>(5, 1.f));
  COMPARE(b.grad().to_vector(), std::vector<float>(5, 1.f));
  VERIFY(a.grad().storage() != b.grad().storage());  // each leaf owns its gradient
}

