// The data package: IDX round trips (raw and gzip, every element type), in-memory datasets
// and splits, MNIST / Fashion-MNIST (synthetic folders, and the real files when present),
// CSV datasets, transforms, and the DataLoader (batch counts, order, determinism, prefetch
// bounds, early exit, exceptions from the workers, grad mode and scheduling policy on the worker
// threads, several workers in parallel).
// Malformed inputs are covered by test_malformed_data.
#include "support/check.h"

#include <sched.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "autograd/grad_mode.h"
#include "data/augment.h"
#include "data/csv.h"
#include "data/dataloader.h"
#include "data/dataset.h"
#include "data/idx.h"
#include "data/mnist.h"
#include "data/sampling.h"
#include "data/transforms.h"
#include "ops/ops.h"
#include "tensor/allocator.h"
#include "tensor/tensor.h"
#include "train/builtin.h"
#include "util/error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using namespace plexus;
using namespace plexus::data;
namespace fs = std::filesystem;

namespace {

using plexus::testing::contains;
using plexus::testing::message_of;


void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  VERIFY(f.good());
}

void write_gz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile gz = gzopen(path.c_str(), "wb");
  VERIFY(gz != nullptr);
  if (!bytes.empty()) COMPARE(gzwrite(gz, bytes.data(), unsigned(bytes.size())), int(bytes.size()));
  COMPARE(gzclose(gz), Z_OK);
}

std::vector<uint8_t> idx_bytes(uint8_t type, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> b = {0, 0, type, uint8_t(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(d >> s));
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

void compare_values(const Tensor& t, const std::vector<float>& expected) {
  const std::vector<float> got = t.to_vector();
  COMPARE(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    VERIFY2(got[i] == expected[i], "element " + std::to_string(i) + ": got " + check::show(got[i]) + ", expected " +
                                       check::show(expected[i]));
}

bool same(const Tensor& a, const Tensor& b) { return a.shape() == b.shape() && a.to_vector() == b.to_vector(); }

// Where the real MNIST files are: $PLEXUS_DATA_DIR (the MNIST folder itself, or a folder
// holding mnist/), else <source dir>/data/mnist.
fs::path mnist_dir() {
  if (const char* env = std::getenv("PLEXUS_DATA_DIR"); env && *env) {
    const fs::path p(env);
    if (fs::exists(p / "train-images-idx3-ubyte") || fs::exists(p / "train-images-idx3-ubyte.gz")) return p;
    return p / "mnist";
  }
  return fs::path(PLEXUS_SOURCE_DIR) / "data" / "mnist";
}

// $PLEXUS_DATA_DIR/fashion-mnist when it exists, else where Debian's package installs it.
fs::path fashion_dir() {
  if (const char* env = std::getenv("PLEXUS_DATA_DIR"); env && *env) {
    const fs::path p = fs::path(env) / "fashion-mnist";
    if (fs::exists(p)) return p;
  }
  return MnistDataset::kDebianFashionDir;
}

// A dataset built from get() only, to exercise the default get_batch. Optionally throws
// for one index, records the grad mode of the calling thread, counts calls begun and
// finished, sleeps (longer for the batch holding slow_at, so that it finishes after the
// batches behind it). Two meeting points let a test see the worker threads without timing
// them: with meet_at > 0 a batch waits until meet_at batches are being assembled at once
// (max_in_flight() says how many were); a batch holding an index >= hold_from waits at a
// gate until release().
class ProbeDataset : public Dataset {
 public:
  explicit ProbeDataset(int64_t n) : n_(n) {}
  int64_t size() const override { return n_; }
  Example get(int64_t i) const override {
    check_index(i, "ProbeDataset::get");
    if (i == throw_at) throw ValueError("probe failure at index " + std::to_string(i));
    return {full({2}, float(i)), scalar(float(i % 3))};
  }
  Example get_batch(const std::vector<int64_t>& indices) const override {
    calls.fetch_add(1);
    if (GradMode::enabled()) grad_on_seen.store(true);
    meet(indices);
    const bool slow = std::find(indices.begin(), indices.end(), slow_at) != indices.end();
    if (sleep_ms || slow) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms + (slow ? 30 : 0)));
    Example out = Dataset::get_batch(indices);
    finished.fetch_add(1);
    return out;
  }

  // Waits until `n` batches wait at the gate; false if that does not happen within kPatience.
  bool wait_until_held(int n) const {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, kPatience, [&] { return held_ >= n; });
  }
  int held() const {
    std::lock_guard lock(mu_);
    return held_;
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      hold_from = -1;
    }
    changed_.notify_all();
  }
  int max_in_flight() const {
    std::lock_guard lock(mu_);
    return max_in_flight_;
  }

  int64_t throw_at = -1;
  int64_t slow_at = -1;
  int sleep_ms = 0;
  int meet_at = 0;
  int64_t hold_from = -1;  // set before the loader starts; release() clears it
  mutable std::atomic<int> calls{0}, finished{0};
  mutable std::atomic<bool> grad_on_seen{false};

 private:
  // How long a meeting point waits before giving up: a bound on a hang, never a measurement
  // (a test that gives up fails on what it counted).
  static constexpr std::chrono::seconds kPatience{20};

  void meet(const std::vector<int64_t>& indices) const {
    std::unique_lock lock(mu_);
    ++in_flight_;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
    if (meet_at > 0 && in_flight_ >= meet_at) met_ = true;
    changed_.notify_all();
    if (meet_at > 0 && !met_ && !changed_.wait_for(lock, kPatience, [&] { return met_; })) met_ = true;  // gave up
    const auto held = [&] {
      return hold_from >= 0 && std::any_of(indices.begin(), indices.end(), [&](int64_t i) { return i >= hold_from; });
    };
    if (held()) {
      ++held_;
      changed_.notify_all();
      changed_.wait(lock, [&] { return !held(); });
      --held_;
    }
    --in_flight_;
  }

  int64_t n_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  mutable int in_flight_ = 0, max_in_flight_ = 0, held_ = 0;
  mutable bool met_ = false;
};

// Opens the dataset's gate when it goes, so that a failed check cannot leave workers waiting
// at it (the pass they belong to waits for them).
struct GateOpener {
  ProbeDataset& ds;
  ~GateOpener() { ds.release(); }
};

std::vector<std::vector<int64_t>> collect_indices(DataLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (Batch& b : loader) out.push_back(b.indices);
  return out;
}

// The batches' indices until a pass ends or throws; the ValueError's message, if one was thrown.
std::vector<std::vector<int64_t>> collect_until_error(DataLoader& loader, std::string& error) {
  std::vector<std::vector<int64_t>> out;
  try {
    for (Batch& b : loader) out.push_back(b.indices);
  } catch (const ValueError& e) {
    error = e.what();
  }
  return out;
}

std::vector<Batch> collect(DataLoader& loader) {
  std::vector<Batch> out;
  for (Batch& b : loader) out.push_back(b);
  return out;
}

std::shared_ptr<TensorDataset> image_dataset(int64_t n) {
  // n images [1, 6, 6] with distinct values, targets = index % 4.
  Tensor x = arange(float(n * 36)).reshape({n, 1, 6, 6}) + 1.f;
  std::vector<float> y;
  for (int64_t i = 0; i < n; ++i) y.push_back(float(i % 4));
  return std::make_shared<TensorDataset>(x, from_vector(y, {n}));
}

}  // namespace

// ---- IDX -----------------------------------------------------------------------------
TEST(idxRoundTripRaw) {
  const testing::TempDir dir;
  const std::string path = dir.file("a-idx3-ubyte").string();
  std::vector<uint8_t> payload;
  for (int i = 0; i < 24; ++i) payload.push_back(uint8_t(i * 10));
  write_bytes(path, idx_bytes(0x08, {2, 3, 4}, payload));
  const IdxArray a = read_idx(path);
  COMPARE(a.path, path);
  VERIFY(!a.compressed);
  VERIFY(a.type == IdxType::UInt8);
  COMPARE(a.dims, (std::vector<int64_t>{2, 3, 4}));
  COMPARE(a.data_offset, int64_t(16));
  COMPARE(a.numel(), int64_t(24));
  COMPARE(a.bytes, payload);
  const Tensor t = a.to_tensor(0.5f);
  COMPARE(t.shape(), (Shape{2, 3, 4}));
  std::vector<float> expected;
  for (int i = 0; i < 24; ++i) expected.push_back(float(i * 10) * 0.5f);
  compare_values(t, expected);
  COMPARE(a.where(17), path + ": byte offset 17");
}

TEST(idxRoundTripGzip) {
  const testing::TempDir dir;
  const std::string path = dir.file("a-idx1-ubyte.gz").string();
  std::vector<uint8_t> payload;
  for (int i = 0; i < 1000; ++i) payload.push_back(uint8_t(i % 251));
  write_gz(path, idx_bytes(0x08, {1000}, payload));
  const IdxArray a = read_idx(path);
  VERIFY(a.compressed);
  COMPARE(a.dims, (std::vector<int64_t>{1000}));
  COMPARE(a.data_offset, int64_t(8));
  COMPARE(a.bytes, payload);
  VERIFY_CONTAINS(a.where(9), "byte offset 9 of the decompressed gzip stream");
}

TEST(idxGzipDetectedByContentNotName) {
  const testing::TempDir dir;
  const std::vector<uint8_t> file = idx_bytes(0x08, {3}, {7, 8, 9});
  const std::string gz_named_plain = dir.file("really-gzip.idx").string();
  const std::string plain_named_gz = dir.file("really-plain.gz").string();
  write_gz(gz_named_plain, file);
  write_bytes(plain_named_gz, file);
  const IdxArray a = read_idx(gz_named_plain), b = read_idx(plain_named_gz);
  VERIFY(a.compressed);
  VERIFY(!b.compressed);
  COMPARE(a.bytes, (std::vector<uint8_t>{7, 8, 9}));
  COMPARE(b.bytes, (std::vector<uint8_t>{7, 8, 9}));
}

TEST(idxEveryElementType) {
  const testing::TempDir dir;
  struct Case {
    uint8_t code;
    IdxType type;
    std::vector<uint8_t> payload;  // two elements, big-endian
    std::vector<float> values;
  };
  const std::vector<Case> cases = {
      {0x08, IdxType::UInt8, {0xff, 0x01}, {255.f, 1.f}},
      {0x09, IdxType::Int8, {0xfd, 0x05}, {-3.f, 5.f}},
      {0x0B, IdxType::Int16, {0xfe, 0xd4, 0x01, 0x00}, {-300.f, 256.f}},
      {0x0C, IdxType::Int32, {0xff, 0xfe, 0xee, 0x90, 0x00, 0x01, 0x00, 0x00}, {-70000.f, 65536.f}},
      {0x0D, IdxType::Float32, {0x3f, 0xc0, 0x00, 0x00, 0xc0, 0x20, 0x00, 0x00}, {1.5f, -2.5f}},
      {0x0E, IdxType::Float64, {0xc0, 0x02, 0, 0, 0, 0, 0, 0, 0x3f, 0xd0, 0, 0, 0, 0, 0, 0}, {-2.25f, 0.25f}},
  };
  for (const Case& c : cases) {
    for (bool gz : {false, true}) {
      const std::string path = dir.file("t" + std::to_string(int(c.code)) + (gz ? ".gz" : "")).string();
      const std::vector<uint8_t> file = idx_bytes(c.code, {2}, c.payload);
      if (gz) write_gz(path, file); else write_bytes(path, file);
      const IdxArray a = read_idx(path);
      VERIFY(a.type == c.type);
      COMPARE(int64_t(a.bytes.size()), 2 * idx_type_size(c.type));
      compare_values(a.to_tensor(), c.values);
      COMPARE(a.value(1), double(c.values[1]));
    }
  }
}

TEST(idxWriteThenRead) {
  const testing::TempDir dir;
  const std::string path = dir.file("w.idx").string();
  write_idx(path, IdxType::Int16, {2, 2}, {0, 1, 0, 2, 0xff, 0xff, 0x7f, 0xff});
  const IdxArray a = read_idx(path);
  compare_values(a.to_tensor(), {1.f, 2.f, -1.f, 32767.f});
  VERIFY(contains(message_of<ValueError>([&] { write_idx(path, IdxType::UInt8, {3}, {1, 2}); }), "3 elements") ||
          contains(message_of<ValueError>([&] { write_idx(path, IdxType::UInt8, {3}, {1, 2}); }), "need 3"));
}

// ---- datasets --------------------------------------------------------------------------
TEST(tensorDataset) {
  Tensor x = arange(12.f).reshape({4, 3});
  Tensor y = from_vector({0, 1, 2, 1}, {4});
  TensorDataset ds(x, y);
  COMPARE(ds.size(), int64_t(4));
  Example e = ds.get(2);
  COMPARE(e.input.shape(), (Shape{3}));
  COMPARE(e.target.shape(), Shape{});
  compare_values(e.input, {6, 7, 8});
  COMPARE(e.target.item(), 2.f);
  Example b = ds.get_batch({3, 0, 3});
  COMPARE(b.input.shape(), (Shape{3, 3}));
  compare_values(b.input, {9, 10, 11, 0, 1, 2, 9, 10, 11});
  compare_values(b.target, {1, 0, 1});
  // The dataset holds its own copy; the batch is a fresh tensor.
  x.fill_(-1.f);
  b.input.fill_(-2.f);
  compare_values(ds.get(0).input, {0, 1, 2});
  // Targets [N, k].
  TensorDataset two(x, ones({4, 2}));
  COMPARE(two.get_batch({1, 2}).target.shape(), (Shape{2, 2}));
  VERIFY_CONTAINS(message_of<IndexError>([&] { ds.get(4); }), "index 4 out of range");
  VERIFY_CONTAINS(message_of<IndexError>([&] { ds.get_batch({0, -1}); }), "index -1");
  VERIFY_CONTAINS(message_of<ShapeError>([&] { TensorDataset(x, ones({3})); }), "4 inputs");
  VERIFY_CONTAINS(message_of<ShapeError>([&] { TensorDataset(x, ones({4, 1, 1})); }), "[N] or [N, k]");
}

TEST(defaultGetBatchStacksExamples) {
  ProbeDataset ds(5);
  Example b = ds.get_batch({4, 1});
  COMPARE(b.input.shape(), (Shape{2, 2}));
  compare_values(b.input, {4, 4, 1, 1});
  compare_values(b.target, {1, 1});
  class Ragged : public Dataset {
   public:
    int64_t size() const override { return 2; }
    Example get(int64_t i) const override { return {zeros({i + 1}), scalar(0)}; }
  } ragged;
  VERIFY_CONTAINS(message_of<ShapeError>([&] { ragged.get_batch({0, 1}); }), "example 1 has input shape [2]");
}

TEST(subsetAndRandomSplit) {
  auto ds = std::make_shared<TensorDataset>(arange(10.f).reshape({10, 1}), arange(10.f));
  auto [a, b] = random_split(ds, 0.7, 42);
  COMPARE(a->size(), int64_t(7));
  COMPARE(b->size(), int64_t(3));
  std::set<int64_t> all(a->indices().begin(), a->indices().end());
  all.insert(b->indices().begin(), b->indices().end());
  COMPARE(all.size(), size_t(10));
  auto [a2, b2] = random_split(ds, 0.7, 42);
  COMPARE(a2->indices(), a->indices());
  auto [a3, b3] = random_split(ds, 0.7, 43);
  VERIFY(a3->indices() != a->indices());
  COMPARE(b->get(1).target.item(), float(b->indices()[1]));
  compare_values(b->get_batch({2, 0}).target, {float(b->indices()[2]), float(b->indices()[0])});
  COMPARE(random_permutation(6, 9), random_permutation(6, 9));
  VERIFY_CONTAINS(message_of<ValueError>([&] { split_indices(4, 1.5, 0); }), "train_fraction");
  VERIFY_CONTAINS(message_of<IndexError>([&] { Subset(ds, {10}); }), "index 10");
}

// target_batch: the targets of get_batch, from every dataset kind without reading inputs.
TEST(targetBatchEqualsGetBatchTargets) {
  const testing::TempDir dir;
  const std::string d = dir.path().string();
  write_bytes(d + "/t10k-images-idx3-ubyte", idx_bytes(0x08, {3, 1, 2}, std::vector<uint8_t>(6, 1)));
  write_bytes(d + "/t10k-labels-idx1-ubyte", idx_bytes(0x08, {3}, {7, 2, 5}));
  {
    std::ofstream f(d + "/c.csv", std::ios::binary);
    f << "x,y\n1,b\n2,a\n3,c\n";
  }
  CsvOptions csv;
  csv.target = "y";
  csv.task = CsvTask::Classification;
  const auto memory = std::make_shared<TensorDataset>(zeros({4, 2}), from_vector({3, 1, 4, 1}, {4}));
  const std::vector<std::shared_ptr<const Dataset>> datasets = {
      memory, std::make_shared<Subset>(memory, std::vector<int64_t>{3, 2, 0}),
      std::make_shared<MnistDataset>(d, Split::Test), std::make_shared<CsvDataset>(d + "/c.csv", csv),
      std::make_shared<ProbeDataset>(3)};
  for (const auto& ds : datasets) {
    const std::vector<int64_t> indices = {2, 0, 2, 1};
    COMPARE(ds->target_batch(indices).to_vector(), ds->get_batch(indices).target.to_vector());
    COMPARE(ds->target_batch(indices).shape(), (Shape{4}));
    VERIFY_CONTAINS(message_of<IndexError>([&] { ds->target_batch({ds->size()}); }), "out of range");
  }
}

// ---- MNIST -------------------------------------------------------------------------------
TEST(mnistSyntheticFolder) {
  const testing::TempDir dir;
  const std::string d = dir.path().string();
  // Train split uncompressed (4 images 2x3), test split gzipped (2 images).
  std::vector<uint8_t> px;
  for (int i = 0; i < 24; ++i) px.push_back(uint8_t(i * 10));
  write_bytes(d + "/train-images-idx3-ubyte", idx_bytes(0x08, {4, 2, 3}, px));
  write_bytes(d + "/train-labels-idx1-ubyte", idx_bytes(0x08, {4}, {3, 0, 9, 3}));
  write_gz(d + "/t10k-images-idx3-ubyte.gz", idx_bytes(0x08, {2, 2, 3}, std::vector<uint8_t>(px.begin(), px.begin() + 12)));
  write_gz(d + "/t10k-labels-idx1-ubyte.gz", idx_bytes(0x08, {2}, {1, 2}));

  MnistDataset train(d, Split::Train);
  COMPARE(train.size(), int64_t(4));
  COMPARE(train.images().shape(), (Shape{4, 1, 2, 3}));
  VERIFY(train.images().is_contiguous());
  COMPARE(train.images().at({1, 0, 0, 0}), 60.f / 255.f);
  compare_values(train.labels(), {3, 0, 9, 3});
  Example e = train.get(2);
  COMPARE(e.input.shape(), (Shape{1, 2, 3}));
  COMPARE(e.target.item(), 9.f);
  Example b = train.get_batch({3, 1});
  COMPARE(b.input.shape(), (Shape{2, 1, 2, 3}));
  compare_values(b.target, {3, 0});
  COMPARE(b.input.at({1, 0, 1, 2}), 110.f / 255.f);
  COMPARE(train.class_names().size(), size_t(10));
  COMPARE(train.class_names()[7], std::string("7"));
  COMPARE(train.images_path(), d + "/train-images-idx3-ubyte");

  FashionMnistDataset test(d, Split::Test);
  COMPARE(test.size(), int64_t(2));
  VERIFY(test.variant() == MnistVariant::Fashion);
  COMPARE(test.labels_path(), d + "/t10k-labels-idx1-ubyte.gz");
  COMPARE(test.class_names()[0], std::string("T-shirt/top"));
  COMPARE(test.class_names()[9], std::string("Ankle boot"));
  // Any dataset says its class names through the base class; a subset says its parent's.
  const auto shared = std::make_shared<FashionMnistDataset>(d, Split::Test);
  const Subset first(shared, {0});
  COMPARE(static_cast<const Dataset&>(first).class_names()[9], std::string("Ankle boot"));
  VERIFY(TensorDataset(zeros({2, 3}), zeros({2})).class_names().empty());
}

// Hides the dataset it forwards to, so that what takes a faster path for MNIST images (the byte
// counts of image_mean_std) takes the general one through get_batch instead.
class Opaque final : public Dataset {
 public:
  explicit Opaque(std::shared_ptr<const Dataset> inner) : inner_(std::move(inner)) {}
  int64_t size() const override { return inner_->size(); }
  Example get(int64_t index) const override { return inner_->get(index); }
  Example get_batch(const std::vector<int64_t>& indices) const override { return inner_->get_batch(indices); }

 private:
  std::shared_ptr<const Dataset> inner_;
};

// The images stay bytes (mapped, or decompressed from gzip) and become floats per batch: the
// same values as the whole float copy images() makes, and the same standardisation.
TEST(mnistBytesAgreeWithFloats) {
  const testing::TempDir dir;
  const std::string d = dir.path().string();
  std::vector<uint8_t> px(size_t(50 * 5 * 7));
  Generator gen(3);
  for (uint8_t& v : px) v = uint8_t(gen.next_u64() % 4 == 0 ? 0 : gen.next_u64() % 256);  // MNIST-like: many zeros
  std::vector<uint8_t> labels(50);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = uint8_t(i % 10);
  write_bytes(d + "/train-images-idx3-ubyte", idx_bytes(0x08, {50, 5, 7}, px));
  write_bytes(d + "/train-labels-idx1-ubyte", idx_bytes(0x08, {50}, labels));
  write_gz(d + "/t10k-images-idx3-ubyte.gz", idx_bytes(0x08, {50, 5, 7}, px));
  write_gz(d + "/t10k-labels-idx1-ubyte.gz", idx_bytes(0x08, {50}, labels));
  for (Split split : {Split::Train, Split::Test}) {
    const auto mnist = std::make_shared<MnistDataset>(d, split);
    const std::vector<int64_t> rows = {49, 0, 7, 7, 23};
    const Example b = mnist->get_batch(rows);
    COMPARE(b.input.shape(), (Shape{5, 1, 5, 7}));
    for (size_t r = 0; r < rows.size(); ++r)
      VERIFY(same(b.input.narrow(0, int64_t(r), 1), mnist->images().narrow(0, rows[r], 1)));
    COMPARE(b.input.at({0, 0, 4, 6}), float(px.back()) / 255.f);
    const std::array<int64_t, 256> counts = mnist->pixel_counts({1, 1, 2});
    std::array<int64_t, 256> expected{};
    for (int64_t i : {1, 1, 2})
      for (int64_t k = 0; k < 35; ++k) ++expected[px[size_t(i * 35 + k)]];
    VERIFY(counts == expected);
    // Standardisation from the byte counts, through subsets, equals the float path's.
    const auto part = std::make_shared<Subset>(mnist, std::vector<int64_t>{4, 9, 13, 2, 40, 41});
    const Subset nested(part, {5, 0, 2});
    for (const Dataset* ds : {static_cast<const Dataset*>(mnist.get()), static_cast<const Dataset*>(part.get()),
                              static_cast<const Dataset*>(&nested)}) {
      const std::shared_ptr<const Dataset> alias(std::shared_ptr<const Dataset>(), ds);  // non-owning
      const train::MeanStd fast = train::image_mean_std(*ds), general = train::image_mean_std(Opaque(alias));
      COMPARE(fast.mean, general.mean);
      COMPARE(fast.std, general.std);
    }
  }
}

TEST(mnistRealStandardisationFromBytes) {
  const fs::path dir = mnist_dir();
  if (!fs::exists(dir / "train-images-idx3-ubyte") && !fs::exists(dir / "train-images-idx3-ubyte.gz"))
    SKIP("MNIST not found (see mnistReal)");
  const auto train = std::make_shared<MnistDataset>(dir.string(), Split::Train);
  const auto [fit, held] = random_split(train, 0.9, 7);
  const train::MeanStd fast = train::image_mean_std(*fit), general = train::image_mean_std(Opaque(fit));
  COMPARE(fast.mean, general.mean);
  COMPARE(fast.std, general.std);
  VERIFY(std::abs(fast.mean - 0.1307f) < 1e-3f);
}

TEST(mnistReal) {
  const fs::path dir = mnist_dir();
  if (!fs::exists(dir / "train-images-idx3-ubyte") && !fs::exists(dir / "train-images-idx3-ubyte.gz"))
    SKIP("MNIST not found in " + dir.string() + " (run scripts/fetch-mnist, or set PLEXUS_DATA_DIR)");
  const auto start = std::chrono::steady_clock::now();
  MnistDataset train(dir.string(), Split::Train);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  MnistDataset test(dir.string(), Split::Test);
  std::printf("INFO   : MNIST train loaded in %lld ms\n", static_cast<long long>(ms.count()));
  COMPARE(train.size(), int64_t(60000));
  COMPARE(test.size(), int64_t(10000));
  COMPARE(train.images().shape(), (Shape{60000, 1, 28, 28}));
  COMPARE(train.labels().at({0}), 5.f);  // the well-known first training digit
  COMPARE(test.labels().at({0}), 7.f);
  const std::vector<float> px = train.images().narrow(0, 0, 100).to_vector();
  float lo = 1, hi = 0;
  for (float v : px) lo = std::min(lo, v), hi = std::max(hi, v);
  COMPARE(lo, 0.f);
  COMPARE(hi, 1.f);
  std::vector<int> count(10, 0);
  for (float v : train.labels().to_vector()) ++count[size_t(v)];
  for (int c = 0; c < 10; ++c) VERIFY(count[size_t(c)] > 5000);
}

TEST(fashionMnistReal) {
  const fs::path dir = fashion_dir();
  if (!fs::exists(dir / "train-images-idx3-ubyte.gz") && !fs::exists(dir / "train-images-idx3-ubyte"))
    SKIP("Fashion-MNIST not found in " + dir.string() +
         " (apt-get install dataset-fashion-mnist, or set PLEXUS_DATA_DIR to a folder holding fashion-mnist/)");
  const auto start = std::chrono::steady_clock::now();
  FashionMnistDataset train(dir.string(), Split::Train);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  std::printf("INFO   : Fashion-MNIST train (gzip) loaded in %lld ms\n", static_cast<long long>(ms.count()));
  FashionMnistDataset test(dir.string(), Split::Test);
  COMPARE(train.size(), int64_t(60000));
  COMPARE(test.size(), int64_t(10000));
  COMPARE(test.images().shape(), (Shape{10000, 1, 28, 28}));
  COMPARE(train.labels().at({0}), 9.f);  // an ankle boot
  COMPARE(test.labels().at({0}), 9.f);
  std::vector<int> count(10, 0);
  for (float v : train.labels().to_vector()) ++count[size_t(v)];
  for (int c = 0; c < 10; ++c) COMPARE(count[size_t(c)], 6000);  // Fashion-MNIST is balanced
}

// ---- CSV ---------------------------------------------------------------------------------
TEST(csvRegression) {
  const testing::TempDir dir;
  const std::string path = dir.file("reg.csv").string();
  write_bytes(path, std::vector<uint8_t>{});
  {
    std::ofstream f(path, std::ios::binary);
    f << "id,x1, x2 ,name,y\n1,0.5,+2,\"a, b\",1.25\n2,-1e2, 3 ,c,-4\n\n3,7,8,\"say \"\"hi\"\"\",0\n";
  }
  CsvOptions opt;
  opt.target = "y";
  opt.features = {"x2", "x1"};
  CsvDataset ds(path, opt);
  COMPARE(ds.size(), int64_t(3));
  COMPARE(ds.feature_names(), (std::vector<std::string>{"x2", "x1"}));
  COMPARE(ds.target_name(), std::string("y"));
  COMPARE(ds.num_classes(), int64_t(0));
  COMPARE(ds.features().shape(), (Shape{3, 2}));
  compare_values(ds.features(), {2, 0.5f, 3, -100, 8, 7});
  compare_values(ds.targets(), {1.25f, -4, 0});
  COMPARE(ds.row_lines(), (std::vector<int64_t>{2, 3, 5}));
  Example e = ds.get(1);
  COMPARE(e.input.shape(), (Shape{2}));
  COMPARE(e.target.item(), -4.f);
  COMPARE(ds.get_batch({2, 0}).input.shape(), (Shape{2, 2}));
}

// Feature rows for a trained model: named columns in the order asked for, the target and
// other columns present or not, their cells never parsed.
TEST(csvFeatureRowsAndHeader) {
  const testing::TempDir dir;
  const std::string path = dir.file("rows.csv").string();
  {
    std::ofstream f(path, std::ios::binary);
    f << "\xEF\xBB\xBFid,x1,\" x2 \",y\r\n7,0.5,+2,not a number\r\n\r\n8,-1e2, 3 ,\r\n";
  }
  COMPARE(read_csv_header(path), (std::vector<std::string>{"id", "x1", " x2 ", "y"}));
  const Tensor x = read_csv_features(path, TablePreparation::numbers({" x2 ", "x1"}));
  COMPARE(x.shape(), (Shape{2, 2}));
  compare_values(x, {2, 0.5f, 3, -100});
  compare_values(read_csv_features(path, TablePreparation::numbers({"id"})), {7, 8});
}

TEST(csvClassificationLabels) {
  const testing::TempDir dir;
  // String labels (sorted order), quoted with embedded commas and quotes, CRLF, a BOM.
  const std::string strings = dir.file("cls.csv").string();
  {
    std::ofstream f(strings, std::ios::binary);
    f << "\xEF\xBB\xBF" "a,b,species\r\n1,2,\"virginica, tall\"\r\n3,4,setosa\r\n5,6,\"virginica, tall\"\r\n7,8,\"s\"\"q\"\r\n";
  }
  CsvOptions opt;
  opt.target = "species";
  opt.task = CsvTask::Classification;
  CsvDataset ds(strings, opt);
  COMPARE(ds.size(), int64_t(4));
  COMPARE(ds.class_names(), (std::vector<std::string>{"s\"q", "setosa", "virginica, tall"}));
  compare_values(ds.targets(), {2, 1, 2, 0});
  compare_values(ds.features(), {1, 2, 3, 4, 5, 6, 7, 8});
  COMPARE(ds.row_lines(), (std::vector<int64_t>{2, 3, 4, 5}));

  // Numeric labels: K = max + 1, or num_classes.
  const std::string nums = dir.file("num.csv").string();
  {
    std::ofstream f(nums, std::ios::binary);
    f << "label,x\n2,0.1\n0,0.2\n2.0,0.3\n";
  }
  CsvOptions o2;
  o2.target = "label";
  o2.task = CsvTask::Classification;
  CsvDataset n1(nums, o2);
  COMPARE(n1.num_classes(), int64_t(3));
  compare_values(n1.targets(), {2, 0, 2});
  o2.num_classes = 5;
  COMPARE(CsvDataset(nums, o2).num_classes(), int64_t(5));
}

TEST(csvSplitAndStandardize) {
  const testing::TempDir dir;
  const std::string path = dir.file("s.csv").string();
  {
    std::ofstream f(path, std::ios::binary);
    f << "x,c,y\n";
    for (int i = 0; i < 50; ++i) f << i << ",7," << i * 2 << "\n";
  }
  CsvOptions opt;
  opt.target = "y";
  CsvDataset ds(path, opt);
  auto [train, val] = ds.split(0.8, 5, true);
  COMPARE(train.size(), int64_t(40));
  COMPARE(val.size(), int64_t(10));
  auto [train2, val2] = ds.split(0.8, 5, true);
  VERIFY(same(train.features(), train2.features()));
  VERIFY(same(val.targets(), val2.targets()));
  // Train features are standardised with train statistics: mean 0, std 1 (the constant
  // column maps to 0); validation uses the same statistics.
  const FeatureStats st = train.feature_stats();
  VERIFY(std::fabs(st.mean[0]) < 1e-5f);
  VERIFY(std::fabs(st.std[0] - 1.f) < 1e-5f);
  COMPARE(st.std[1], 1.f);
  const FeatureStats raw = ds.subset(std::vector<int64_t>(split_indices(50, 0.8, 5).first)).feature_stats();
  for (int64_t i = 0; i < val.size(); ++i) {
    const float original = float((val.row_lines()[size_t(i)] - 2));  // x = row index
    VERIFY(std::fabs(val.features().at({i, 0}) - (original - raw.mean[0]) / raw.std[0]) < 1e-4f);
    COMPARE(val.features().at({i, 1}), 0.f);
    COMPARE(val.targets().at({i}), 2 * original);  // targets are never standardised
  }
  // The two parts are disjoint and cover every row.
  const std::vector<int64_t> train_lines = train.row_lines(), val_lines = val.row_lines();
  std::set<int64_t> lines(train_lines.begin(), train_lines.end());
  lines.insert(val_lines.begin(), val_lines.end());
  COMPARE(lines.size(), size_t(50));
  auto [t3, v3] = ds.split(0.8, 6);
  VERIFY(t3.row_lines() != train.row_lines());
}

// ---- transforms ----------------------------------------------------------------------------
TEST(transformNormalize) {
  Generator gen(1);
  Example b{from_vector({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}), from_vector({0, 1}, {2})};
  const Example out = Normalize({1, 2}, {2, 4}).apply(b, gen);
  compare_values(out.input, {0, 0.5f, 0.25f, 0.5f, 2, 2.5f, 1.25f, 1.5f});
  compare_values(b.input, {1, 2, 3, 4, 5, 6, 7, 8});  // input untouched
  compare_values((*normalize({1}, {2}))(b, gen).input, {0, 0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f});
  VERIFY_CONTAINS(message_of<ShapeError>([&] { Normalize({0, 0, 0}, {1, 1, 1}).apply(b, gen); }), "3 channel");
  VERIFY_CONTAINS(message_of<ValueError>([&] { Normalize({0}, {0}); }), "positive");
}

TEST(transformOneHot) {
  Generator gen(1);
  Example b{zeros({3, 2}), from_vector({2, 0, 1}, {3})};
  const Example out = OneHot(4).apply(b, gen);
  COMPARE(out.target.shape(), (Shape{3, 4}));
  compare_values(out.target, {0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0});
  Example bad{zeros({1, 2}), from_vector({4}, {1})};
  VERIFY_CONTAINS(message_of<ValueError>([&] { OneHot(4).apply(bad, gen); }), "not a class index in [0, 3]");
}

TEST(transformRandomShift) {
  const int64_t n = 16, h = 5, w = 6;
  Tensor x = arange(float(n * 2 * h * w)).reshape({n, 2, h, w}) + 1.f;
  Example b{x, zeros({n})};
  Generator g0(3);
  VERIFY(same(RandomShift(0).apply(b, g0).input, x));
  Generator g1(7), g2(7), g3(8);
  const Tensor y1 = RandomShift(2).apply(b, g1).input;
  VERIFY(same(y1, RandomShift(2).apply(b, g2).input));
  VERIFY(!same(y1, RandomShift(2).apply(b, g3).input));
  // Every example is its input moved by some (dy, dx) in [-2, 2]^2, both channels alike,
  // zeros where nothing moved in.
  std::set<std::pair<int64_t, int64_t>> shifts;
  for (int64_t i = 0; i < n; ++i) {
    bool found = false;
    for (int64_t dy = -2; dy <= 2 && !found; ++dy)
      for (int64_t dx = -2; dx <= 2 && !found; ++dx) {
        bool ok = true;
        for (int64_t c = 0; c < 2 && ok; ++c)
          for (int64_t r = 0; r < h && ok; ++r)
            for (int64_t q = 0; q < w && ok; ++q) {
              const int64_t sr = r - dy, sq = q - dx;
              const float expect = (sr >= 0 && sr < h && sq >= 0 && sq < w) ? x.at({i, c, sr, sq}) : 0.f;
              ok = y1.at({i, c, r, q}) == expect;
            }
        if (ok) {
          found = true;
          shifts.insert({dy, dx});
        }
      }
    VERIFY2(found, "example " + std::to_string(i) + " is not a shift of its input");
  }
  VERIFY(shifts.size() > 3);  // offsets vary per example
  VERIFY_CONTAINS(message_of<ShapeError>([&] { Generator g(1); RandomShift(1).apply({zeros({2, 3}), zeros({2})}, g); }),
                  "[B, ..., H, W]");
}

TEST(transformCompose) {
  Generator g1(11), g2(11);
  Example b{arange(36.f).reshape({1, 1, 6, 6}), from_vector({1}, {1})};
  TransformPtr t = compose({random_shift(1), normalize({1}, {2}), one_hot(3)});
  const Example out = t->apply(b, g1);
  COMPARE(out.target.shape(), (Shape{1, 3}));
  // Same as applying them one after another with the same generator.
  Example manual = RandomShift(1).apply(b, g2);
  manual = Normalize({1}, {2}).apply(manual, g2);
  VERIFY(same(out.input, manual.input));
  Example doubled = LambdaTransform([](const Example& e, Generator&) { return Example{e.input * 2.f, e.target}; })
                        .apply(b, g1);
  COMPARE(doubled.input.at({0, 0, 0, 1}), 2.f);
}

// ---- DataLoader ------------------------------------------------------------------------------
TEST(loaderBatchCounts) {
  auto ds = std::make_shared<ProbeDataset>(10);
  for (int64_t prefetch : {0, 2}) {
    DataLoader keep(ds, {.batch_size = 3, .prefetch = prefetch});
    COMPARE(keep.size(), int64_t(4));
    const auto batches = collect(keep);
    COMPARE(int64_t(batches.size()), int64_t(4));
    COMPARE(batches.back().inputs.shape(), (Shape{1, 2}));
    COMPARE(batches.back().indices, (std::vector<int64_t>{9}));
    DataLoader drop(ds, {.batch_size = 3, .drop_last = true, .prefetch = prefetch});
    COMPARE(drop.size(), int64_t(3));
    const auto dropped = collect(drop);
    COMPARE(int64_t(dropped.size()), int64_t(3));
    for (const Batch& b : dropped) COMPARE(b.inputs.shape(), (Shape{3, 2}));
  }
  COMPARE(DataLoader(ds, {.batch_size = 10, .drop_last = true}).size(), int64_t(1));
  COMPARE(DataLoader(ds, {.batch_size = 11, .drop_last = true}).size(), int64_t(0));
  COMPARE(DataLoader(ds, {.batch_size = 11}).size(), int64_t(1));
  DataLoader none(ds, {.batch_size = 11, .drop_last = true});
  VERIFY(none.begin() == none.end());
  auto empty_ds = std::make_shared<ProbeDataset>(0);
  DataLoader empty_loader(empty_ds);
  COMPARE(empty_loader.size(), int64_t(0));
  COMPARE(collect(empty_loader).size(), size_t(0));
  VERIFY_CONTAINS(message_of<ValueError>([&] { DataLoader(ds, {.batch_size = 0}); }), "batch_size");
  VERIFY_CONTAINS(message_of<ValueError>([&] { DataLoader(ds, {.prefetch = -1}); }), "prefetch");
  VERIFY_CONTAINS(message_of<ValueError>([&] { DataLoader(ds, {.workers = 0}); }), "workers");
}

TEST(loaderSequentialOrderAndContents) {
  auto ds = image_dataset(7);
  DataLoader loader(ds, {.batch_size = 3});
  std::vector<int64_t> seen;
  for (Batch& b : loader) {
    COMPARE(b.inputs.size(0), int64_t(b.indices.size()));
    VERIFY(!b.inputs.requires_grad());
    for (size_t r = 0; r < b.indices.size(); ++r) {
      VERIFY(same(b.inputs.narrow(0, int64_t(r), 1), ds->get_batch({b.indices[r]}).input));
      COMPARE(b.targets.at({int64_t(r)}), float(b.indices[r] % 4));
    }
    seen.insert(seen.end(), b.indices.begin(), b.indices.end());
  }
  COMPARE(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(loaderEveryIndexOncePerEpoch) {
  auto ds = std::make_shared<ProbeDataset>(103);
  DataLoader loader(ds, {.batch_size = 8, .shuffle = true, .seed = 4});
  std::vector<std::vector<int64_t>> orders;
  for (int epoch = 0; epoch < 3; ++epoch) {
    COMPARE(loader.epoch(), int64_t(epoch));
    std::vector<int64_t> seen;
    for (const auto& idx : collect_indices(loader)) seen.insert(seen.end(), idx.begin(), idx.end());
    orders.push_back(seen);
    std::vector<int64_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < 103; ++i) COMPARE(sorted[size_t(i)], i);
  }
  VERIFY(orders[0] != orders[1]);  // a new order every epoch
  VERIFY(orders[1] != orders[2]);
  // drop_last: no index twice, size * batch_size of them.
  DataLoader drop(ds, {.batch_size = 8, .shuffle = true, .drop_last = true, .seed = 4});
  std::set<int64_t> unique;
  int64_t count = 0;
  for (const auto& idx : collect_indices(drop)) {
    unique.insert(idx.begin(), idx.end());
    count += int64_t(idx.size());
  }
  COMPARE(count, int64_t(96));
  COMPARE(int64_t(unique.size()), count);
}

TEST(loaderDeterminism) {
  auto ds = image_dataset(40);
  const TransformPtr aug = compose({random_shift(2), normalize({0.5f}, {2.f})});
  const auto run = [&](uint64_t seed, int64_t prefetch, int64_t epoch) {
    DataLoader loader(ds, {.batch_size = 6, .shuffle = true, .seed = seed, .prefetch = prefetch, .transform = aug});
    loader.set_epoch(epoch);
    return collect(loader);
  };
  const auto a = run(1, 2, 0);
  const auto b = run(1, 2, 0);
  const auto sync = run(1, 0, 0);
  const auto deep = run(1, 7, 0);
  const auto other_seed = run(2, 2, 0);
  const auto other_epoch = run(1, 2, 1);
  COMPARE(a.size(), size_t(7));
  bool seed_differs = false, epoch_differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    COMPARE(a[i].indices, b[i].indices);
    VERIFY(same(a[i].inputs, b[i].inputs));
    VERIFY(same(a[i].targets, b[i].targets));
    VERIFY(same(a[i].inputs, sync[i].inputs));  // prefetch depth does not matter
    VERIFY(same(a[i].inputs, deep[i].inputs));
    seed_differs |= a[i].indices != other_seed[i].indices;
    epoch_differs |= a[i].indices != other_epoch[i].indices;
  }
  VERIFY(seed_differs);
  VERIFY(epoch_differs);
  // batch_indices predicts a pass; set_epoch replays one.
  DataLoader loader(ds, {.batch_size = 6, .shuffle = true, .seed = 1});
  const auto first = collect_indices(loader);
  COMPARE(loader.epoch(), int64_t(1));
  COMPARE(first, loader.batch_indices(0));
  VERIFY(collect_indices(loader) != first);
  loader.set_epoch(0);
  COMPARE(collect_indices(loader), first);
}

TEST(loaderWorkersGiveTheSameBatches) {
  auto ds = image_dataset(50);
  const TransformPtr aug = compose({augmentation({.shift = 2, .flip = true, .rotation = 20}), normalize({0.5f}, {2.f})});
  const auto run = [&](int64_t prefetch, int64_t workers) {
    DataLoader loader(ds, {.batch_size = 4, .shuffle = true, .seed = 3, .prefetch = prefetch, .workers = workers,
                           .transform = aug});
    loader.set_epoch(2);
    return collect(loader);
  };
  const auto sync = run(0, 1);
  COMPARE(sync.size(), size_t(13));
  for (const auto& [prefetch, workers] : {std::pair<int64_t, int64_t>{2, 1}, {2, 2}, {4, 4}, {1, 4}, {8, 2}}) {
    const auto got = run(prefetch, workers);
    COMPARE(got.size(), sync.size());
    for (size_t i = 0; i < got.size(); ++i) {
      COMPARE(got[i].indices, sync[i].indices);
      VERIFY2(same(got[i].inputs, sync[i].inputs),
              "batch " + std::to_string(i) + " differs with prefetch " + std::to_string(prefetch) + ", " +
                  std::to_string(workers) + " workers");
      VERIFY(same(got[i].targets, sync[i].targets));
    }
  }
}

TEST(loaderWorkersRunInParallel) {
  auto ds = std::make_shared<ProbeDataset>(16);
  ds->meet_at = 4;  // each batch waits until four are being assembled at once
  DataLoader loader(ds, {.batch_size = 2, .prefetch = 4, .workers = 4});
  COMPARE(collect(loader).size(), size_t(8));
  // One after the other there would only ever be one batch in progress; four workers have four.
  COMPARE(ds->max_in_flight(), 4);
}

TEST(loaderWorkersStayWithinPrefetch) {
  // Ahead of the consumer: at most max(prefetch, workers) batches, assembled or in progress.
  for (const auto& [prefetch, workers] : {std::pair<int64_t, int64_t>{2, 4}, {5, 3}}) {
    auto ds = std::make_shared<ProbeDataset>(100);
    DataLoader loader(ds, {.batch_size = 2, .prefetch = prefetch, .workers = workers});
    auto it = loader.begin();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const int ahead = int(std::max(prefetch, workers));
    VERIFY2(ds->calls.load() <= 1 + ahead, std::to_string(ds->calls.load()) + " batches assembled");
    for (int64_t b = 1; b < 10; ++b) {
      ++it;
      COMPARE(it->indices.front(), 2 * b);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    VERIFY(ds->calls.load() <= 10 + ahead);
  }
}

TEST(loaderWorkersStopPromptlyOnBreak) {
  auto ds = std::make_shared<ProbeDataset>(1000);
  ds->hold_from = 8;  // batches from 2 on (indices 8 and up) wait at the gate until the test opens it
  DataLoader loader(ds, {.batch_size = 4, .prefetch = 4, .workers = 4});
  auto it = loader.begin();
  const GateOpener open_when_done{*ds};
  ++it;
  // Every worker is busy with a batch (2 to 5, as many as may be ahead of the consumer's).
  VERIFY2(ds->wait_until_held(4), std::to_string(ds->held()) + " of 4 workers busy");
  COMPARE(ds->calls.load(), 2 + 4);
  // The last iterator goes, on a thread of its own: every worker finishes at most its batch
  // and is joined, so the pass cannot end while they are held.
  std::atomic<bool> ended{false};
  std::thread drop([&ended, pass = std::move(it)]() mutable {
    pass = DataLoader::Iterator();
    ended = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // time to end, were it not joining them
  const bool ended_while_busy = ended.load();
  ds->release();
  drop.join();
  VERIFY2(!ended_while_busy, "the pass ended while its workers were still assembling batches");
  const int after = ds->calls.load();
  VERIFY2(after <= 2 + 4, std::to_string(after) + " batches assembled for 2 taken");
  COMPARE(ds->finished.load(), after);  // every batch begun was finished before the pass ended
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  COMPARE(ds->calls.load(), after);
}

TEST(loaderWorkersDeliverErrorsInOrder) {
  for (const bool slow_failure : {false, true}) {
    auto ds = std::make_shared<ProbeDataset>(30);
    ds->sleep_ms = 2;
    ds->throw_at = 16;  // in batch 5 of batch_size 3
    if (slow_failure) ds->slow_at = 15;  // batch 5 fails after batches 6 and 7 are assembled
    DataLoader loader(ds, {.batch_size = 3, .prefetch = 3, .workers = 3});
    std::string error;
    const std::vector<std::vector<int64_t>> got = collect_until_error(loader, error);
    auto expected = loader.batch_indices(0);
    expected.resize(5);
    COMPARE(got, expected);  // batches 0 to 4, in order, then the error
    VERIFY_CONTAINS(error, "probe failure at index 16");
    ds->throw_at = -1;
    COMPARE(collect(loader).size(), size_t(10));  // the next pass starts afresh
  }
}

TEST(loaderPrefetchIsBounded) {
  auto ds = std::make_shared<ProbeDataset>(100);
  DataLoader loader(ds, {.batch_size = 2, .prefetch = 3});
  auto it = loader.begin();
  COMPARE(it->indices, (std::vector<int64_t>{0, 1}));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // The consumed batch, plus at most `prefetch` assembled ahead.
  VERIFY2(ds->calls.load() <= 4, std::to_string(ds->calls.load()) + " batches assembled");
  ++it;
  COMPARE(it->indices, (std::vector<int64_t>{2, 3}));
}

TEST(loaderEarlyExitAndDestruction) {
  auto ds = std::make_shared<ProbeDataset>(1000);
  ds->sleep_ms = 2;
  {
    DataLoader loader(ds, {.batch_size = 4, .prefetch = 2});
    int taken = 0;
    for (Batch& b : loader) {
      (void)b;
      if (++taken == 3) break;  // the pass ends with the loop's iterator
    }
    const int after_break = ds->calls.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    COMPARE(ds->calls.load(), after_break);  // the worker was stopped and joined
    VERIFY(after_break <= 3 + 2 + 1);
  }
  {
    // The loader destroyed mid-pass: the pass lives on with its iterator, then stops.
    auto loader = std::make_unique<DataLoader>(ds, DataLoaderOptions{.batch_size = 4});
    auto it = loader->begin();
    ++it;
    loader.reset();
    COMPARE(it->indices.front(), int64_t(4));
    ++it;
    COMPARE(it->indices.front(), int64_t(8));
  }
  {
    // Destroyed right after starting, while the worker is busy.
    DataLoader loader(ds, {.batch_size = 4, .prefetch = 4});
    auto it = loader.begin();
  }
  // A borrowed dataset works the same.
  ProbeDataset local(10);
  DataLoader borrowed(local, {.batch_size = 5});
  COMPARE(collect(borrowed).size(), size_t(2));
}

// A run's loader over data in memory keeps thousands of examples ahead (session::loader_prefetch,
// 40 batches of 100): the same batches as assembling each when asked; a failing batch assembled
// long before its turn fails at its own step, after every batch before it; a pass dropped with a
// full queue stops its worker.
TEST(loaderDeepPrefetchKeepsItsBatchesAndErrors) {
  const auto data = image_dataset(203);
  const TransformPtr aug = compose({random_shift(1), normalize({3.f}, {2.f})});
  DataLoader deep(data, {.batch_size = 5, .shuffle = true, .seed = 9, .prefetch = 40, .transform = aug});
  DataLoader asked(data, {.batch_size = 5, .shuffle = true, .seed = 9, .prefetch = 0, .transform = aug});
  for (int epoch = 0; epoch < 2; ++epoch) {
    const std::vector<Batch> a = collect(deep), b = collect(asked);
    COMPARE(a.size(), size_t(41));
    COMPARE(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      COMPARE(a[i].indices, b[i].indices);
      VERIFY2(same(a[i].inputs, b[i].inputs) && same(a[i].targets, b[i].targets),
              "epoch " + std::to_string(epoch) + ", batch " + std::to_string(i) + " differs");
    }
  }

  auto failing = std::make_shared<ProbeDataset>(300);
  failing->throw_at = 157;  // in batch 31
  DataLoader ahead(failing, {.batch_size = 5, .prefetch = 40});
  std::string error;
  std::vector<std::vector<int64_t>> got;
  try {
    for (auto it = ahead.begin(); it != ahead.end(); ++it) {
      if (got.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the worker runs to the failure
      got.push_back(it->indices);
    }
  } catch (const ValueError& e) {
    error = e.what();
  }
  auto expected = ahead.batch_indices(0);
  expected.resize(31);
  COMPARE(got, expected);
  VERIFY_CONTAINS(error, "probe failure at index 157");

  auto many = std::make_shared<ProbeDataset>(100000);
  DataLoader stopped(many, {.batch_size = 5, .prefetch = 40});
  {
    auto it = stopped.begin();
    ++it;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    VERIFY2(many->calls.load() <= 2 + 40, std::to_string(many->calls.load()) + " batches assembled for 2 taken");
  }
  const int after = many->calls.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  COMPARE(many->calls.load(), after);  // the pass ended with its iterator: its worker was joined
}

// A batch's tensors come from the CPU allocator's cache (tensor/allocator.h): once a pass has had
// its whole queue filled, the passes after it take no memory from the system.
TEST(loaderReusesBatchMemory) {
  const auto data = image_dataset(400);
  DataLoader loader(data, {.batch_size = 10, .shuffle = true, .seed = 2, .prefetch = 40,
                           .transform = normalize({1.f}, {2.f})});
  {
    auto it = loader.begin();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the worker fills the queue
    while (it != loader.end()) ++it;
  }
  const int64_t before = memory_stats().system_allocations;
  for (int epoch = 0; epoch < 2; ++epoch)
    for (Batch& b : loader) VERIFY(b.inputs.defined());
  COMPARE(memory_stats().system_allocations, before);
}

TEST(loaderPropagatesWorkerExceptions) {
  for (int64_t prefetch : {0, 1, 3}) {
    auto ds = std::make_shared<ProbeDataset>(20);
    ds->throw_at = 7;  // in batch 2 of batch_size 3
    DataLoader loader(ds, {.batch_size = 3, .prefetch = prefetch});
    std::string error;
    const std::vector<std::vector<int64_t>> got = collect_until_error(loader, error);
    COMPARE(got.size(), size_t(2));  // the batches before the failing one arrive first
    VERIFY_CONTAINS(error, "probe failure at index 7");
    // A failure in the very first batch is thrown by begin().
    ds->throw_at = 0;
    VERIFY_CONTAINS(message_of<ValueError>([&] { loader.begin(); }), "probe failure at index 0");
    // The next pass starts afresh once the data is fine.
    ds->throw_at = -1;
    COMPARE(collect(loader).size(), size_t(7));
  }
}

TEST(loaderWorkerRunsWithoutGrad) {
  auto ds = std::make_shared<ProbeDataset>(12);
  VERIFY(GradMode::enabled());
  for (int64_t workers : {1, 3}) {
    DataLoader loader(ds, {.batch_size = 4, .prefetch = 2, .workers = workers,
                           .transform = std::make_shared<LambdaTransform>([](const Example& e, Generator&) {
                             if (GradMode::enabled()) throw AutogradError("grad mode on in the transform");
                             return e;
                           })});
    for (Batch& b : loader) VERIFY(!b.inputs.requires_grad());
  }
  VERIFY(!ds->grad_on_seen.load());
  VERIFY(GradMode::enabled());  // the consumer's mode is untouched
  DataLoader sync(ds, {.batch_size = 4, .prefetch = 0});
  COMPARE(collect(sync).size(), size_t(3));
  VERIFY(!ds->grad_on_seen.load());
  VERIFY(GradMode::enabled());
}

// Workers run as SCHED_BATCH (no wake-up preemption of the consumer); the consumer's own
// policy, and batches assembled on it (prefetch 0), are left as they are.
TEST(loaderWorkersRunAsBatchThreads) {
  auto ds = std::make_shared<ProbeDataset>(12);
  const int consumer = sched_getscheduler(0);
  VERIFY(consumer != SCHED_BATCH);
  for (int64_t prefetch : {0, 2}) {
    std::atomic<int> batch_threads{0}, others{0};
    DataLoader loader(ds, {.batch_size = 4, .prefetch = prefetch, .workers = 2,
                           .transform = std::make_shared<LambdaTransform>([&](const Example& e, Generator&) {
                             ++(sched_getscheduler(0) == SCHED_BATCH ? batch_threads : others);
                             return e;
                           })});
    COMPARE(collect(loader).size(), size_t(3));
    COMPARE(batch_threads.load(), prefetch ? 3 : 0);
    COMPARE(others.load(), prefetch ? 0 : 3);
    COMPARE(sched_getscheduler(0), consumer);
  }
}

TEST(loaderCoversAnAugmentedMnistEpoch) {
  const fs::path dir = mnist_dir();
  if (!fs::exists(dir / "train-images-idx3-ubyte") && !fs::exists(dir / "train-images-idx3-ubyte.gz"))
    SKIP("MNIST not found (see mnistReal)");
  auto train = std::make_shared<MnistDataset>(dir.string(), Split::Train);
  DataLoader loader(train, {.batch_size = 128, .shuffle = true, .seed = 0,
                            .transform = compose({random_shift(2), normalize({0.1307f}, {0.3081f})})});
  const auto start = std::chrono::steady_clock::now();
  int64_t rows = 0;
  for (Batch& b : loader) {
    COMPARE(b.inputs.dim(), int64_t(4));
    rows += b.inputs.size(0);
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  std::printf("INFO   : one shuffled, augmented MNIST epoch (469 batches) in %lld ms\n",
              static_cast<long long>(ms.count()));
  COMPARE(rows, int64_t(60000));
  COMPARE(loader.size(), int64_t(469));
}

