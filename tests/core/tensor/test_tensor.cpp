// Tensor basics: geometry of fresh tensors, views that share storage, copies, factories,
// seeded random numbers, printing, error messages, in-place updates, devices and the
// caching allocator.
#include "support/check.h"

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "cuda/cuda.h"
#include "ops/ops.h"
#include "tensor/allocator.h"
#include "tensor/generator.h"
#include "tensor/tensor.h"
#include "util/error.h"
#include "support/test_support.h"

using namespace plexus;
using testing::cat;

namespace {

// Runs `f` and returns what() of the exception of type E it throws, or a marker saying
// that it threw something else or nothing (so a VERIFY on the text fails visibly).
using plexus::testing::contains;
using plexus::testing::message_of;

// Strings so that COMPARE prints both sides on failure.
std::string shape_str(const Shape& s) { return to_string(s); }

void compare_values(const Tensor& t, const std::vector<float>& expected) {
  const std::vector<float> got = t.to_vector();
  COMPARE(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    VERIFY2(got[i] == expected[i], cat("element ", i, ": got ", got[i], ", expected ", expected[i]));
}

double mean_of(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return s / double(v.size());
}

double std_of(const std::vector<float>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (float x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size()));
}

}  // namespace

TEST(deviceNamesParseStrictly) {
  VERIFY(parse_device("cpu") == Device::cpu());
  VERIFY(parse_device("cuda") == Device::cuda(0));
  VERIFY(parse_device("cuda:3") == Device::cuda(3));
  for (const char* bad : {"", "gpu", "CPU", "cuda:", "cuda:-1", "cuda:1x", "cuda: 1", "cuda:99999999999", "cuda0"}) {
    const std::string msg = message_of<ValueError>([&] { (void)parse_device(bad); });
    VERIFY2(msg == "unknown device '" + std::string(bad) + "': expected cpu, cuda or cuda:N", msg.c_str());
  }
}

// Whatever the machine, a GPU that is not there is a DeviceError naming it and what exists.
TEST(missingGpuIsADeviceError) {
  const Device absent = Device::cuda(plexus::cuda::device_count());
  const std::string msg = message_of<DeviceError>([&] { (void)ones({2}).to(absent); });
  VERIFY2(msg.starts_with(absent.str() + " is not available: "), msg.c_str());
  VERIFY2(plexus::cuda::device_count() > 0 || msg.find("no CUDA device") != std::string::npos, msg.c_str());
  VERIFY(message_of<DeviceError>([&] { (void)zeros({2}, absent); }).starts_with(absent.str()));
}

TEST(freshTensorGeometry) {
  const Tensor a = zeros({2, 3, 4});
  COMPARE(shape_str(a.shape()), std::string("[2, 3, 4]"));
  COMPARE(shape_str(a.strides()), std::string("[12, 4, 1]"));
  COMPARE(a.offset(), int64_t(0));
  COMPARE(a.dim(), int64_t(3));
  COMPARE(a.numel(), int64_t(24));
  COMPARE(a.size(-1), int64_t(4));
  COMPARE(a.size(0), int64_t(2));
  VERIFY(a.is_contiguous());
  VERIFY(a.device() == Device::cpu());
  VERIFY(!a.requires_grad());
  VERIFY(a.is_leaf());
  COMPARE(a.storage()->numel, int64_t(24));
  VERIFY_THROWS(IndexError, a.size(3));

  const Tensor s = scalar(2.5f);
  COMPARE(s.dim(), int64_t(0));
  COMPARE(s.numel(), int64_t(1));
  VERIFY(s.strides().empty());
  COMPARE(s.item(), 2.5f);

  const Tensor e = zeros({0, 3});
  COMPARE(e.numel(), int64_t(0));
  COMPARE(shape_str(e.shape()), std::string("[0, 3]"));
  VERIFY(e.to_vector().empty());

  VERIFY_THROWS(ShapeError, empty({2, -1}));
  VERIFY(!Tensor().defined());
  VERIFY_THROWS(ValueError, Tensor().shape());
}

TEST(viewsShareStorage) {
  const Tensor a = arange(24).reshape({2, 3, 4});
  VERIFY(a.is_contiguous());

  // reshape / view of a contiguous tensor
  const Tensor r = a.reshape({6, 4});
  VERIFY(r.storage() == a.storage());
  COMPARE(shape_str(r.strides()), std::string("[4, 1]"));
  const Tensor v = a.view({4, -1});
  VERIFY(v.storage() == a.storage());
  COMPARE(shape_str(v.shape()), std::string("[4, 6]"));
  COMPARE(shape_str(v.strides()), std::string("[6, 1]"));
  COMPARE(v.at({3, 5}), 23.f);
  const Tensor f = a.flatten();
  VERIFY(f.storage() == a.storage());
  COMPARE(shape_str(f.shape()), std::string("[24]"));

  // transpose
  const Tensor t = a.transpose(0, 2);
  VERIFY(t.storage() == a.storage());
  COMPARE(shape_str(t.shape()), std::string("[4, 3, 2]"));
  COMPARE(shape_str(t.strides()), std::string("[1, 4, 12]"));
  VERIFY(!t.is_contiguous());
  COMPARE(t.at({3, 2, 1}), a.at({1, 2, 3}));
  COMPARE(t.at({1, 0, 1}), 13.f);

  // permute
  const Tensor p = a.permute({2, 0, 1});
  VERIFY(p.storage() == a.storage());
  COMPARE(shape_str(p.shape()), std::string("[4, 2, 3]"));
  COMPARE(shape_str(p.strides()), std::string("[1, 12, 4]"));
  COMPARE(p.at({3, 1, 2}), a.at({1, 2, 3}));
  VERIFY_THROWS(ValueError, a.permute({0, 0, 1}));

  // narrow / slice: offset moves, strides stay (or scale by the step)
  const Tensor n = a.narrow(1, 1, 2);
  VERIFY(n.storage() == a.storage());
  COMPARE(shape_str(n.shape()), std::string("[2, 2, 4]"));
  COMPARE(shape_str(n.strides()), std::string("[12, 4, 1]"));
  COMPARE(n.offset(), int64_t(4));
  COMPARE(n.at({1, 1, 3}), 23.f);
  const Tensor s = slice(a, 2, 1, 4, 2);
  VERIFY(s.storage() == a.storage());
  COMPARE(shape_str(s.shape()), std::string("[2, 3, 2]"));
  COMPARE(shape_str(s.strides()), std::string("[12, 4, 2]"));
  COMPARE(s.offset(), int64_t(1));
  compare_values(s.narrow(0, 0, 1), {1, 3, 5, 7, 9, 11});
  VERIFY_THROWS(IndexError, a.narrow(1, 2, 2));

  // expand: stride 0 on the broadcast dim
  const Tensor col = arange(3).reshape({3, 1});
  const Tensor e = col.expand({2, 3, 4});
  VERIFY(e.storage() == col.storage());
  COMPARE(shape_str(e.shape()), std::string("[2, 3, 4]"));
  COMPARE(shape_str(e.strides()), std::string("[0, 1, 0]"));
  COMPARE(e.at({1, 2, 3}), 2.f);
  VERIFY_THROWS(ShapeError, col.expand({2, 2}));  // 3 cannot become 2
  VERIFY_THROWS(ShapeError, col.expand({4}));     // fewer dims

  // squeeze / unsqueeze
  const Tensor u = a.unsqueeze(1);
  VERIFY(u.storage() == a.storage());
  COMPARE(shape_str(u.shape()), std::string("[2, 1, 3, 4]"));
  COMPARE(u.strides()[0], int64_t(12));
  COMPARE(u.strides()[2], int64_t(4));
  COMPARE(u.strides()[3], int64_t(1));
  const Tensor u_last = a.unsqueeze(-1);
  COMPARE(shape_str(u_last.shape()), std::string("[2, 3, 4, 1]"));
  const Tensor sq = u.squeeze();
  VERIFY(sq.storage() == a.storage());
  COMPARE(shape_str(sq.shape()), std::string("[2, 3, 4]"));
  COMPARE(shape_str(sq.strides()), std::string("[12, 4, 1]"));
  const Tensor sq1 = u.squeeze(1);
  COMPARE(shape_str(sq1.shape()), std::string("[2, 3, 4]"));
  COMPARE(shape_str(a.squeeze(0).shape()), std::string("[2, 3, 4]"));  // size 2: unchanged

  // a view of a view (transpose of a narrow) still shares and indexes correctly
  const Tensor tn = n.transpose(0, 1);
  VERIFY(tn.storage() == a.storage());
  COMPARE(tn.offset(), int64_t(4));
  COMPARE(tn.at({1, 0, 2}), a.at({0, 2, 2}));

  // writes through a view are visible in the base
  {
    Tensor w = zeros({2, 3});
    Tensor row = w.narrow(0, 1, 1);
    row.fill_(7.f);
    compare_values(w, {0, 0, 0, 7, 7, 7});
  }
}

TEST(reshapeOfNonContiguousCopies) {
  const Tensor a = arange(6).reshape({2, 3});
  const Tensor t = a.t();  // [3, 2], strides [1, 3]
  const Tensor r = t.reshape({6});
  VERIFY(r.storage() != a.storage());
  VERIFY(r.is_contiguous());
  compare_values(r, {0, 3, 1, 4, 2, 5});
  // A reshape that only splits a dim of the transposed tensor is still a view.
  const Tensor r2 = t.reshape({3, 2, 1});
  VERIFY(r2.storage() == a.storage());
}

TEST(viewOnIncompatibleLayoutThrows) {
  const Tensor t = arange(6).reshape({2, 3}).t();
  const std::string msg = message_of<ShapeError>([&] { (void)t.view({6}); });
  VERIFY2(contains(msg, "[6]"), msg.c_str());
  VERIFY2(contains(msg, "reshape"), msg.c_str());
  VERIFY_THROWS(ShapeError, arange(6).view({4, 2}));
  VERIFY_THROWS(ShapeError, arange(6).view({-1, -1}));
  const std::string bad = message_of<ShapeError>([] { (void)arange(6).reshape({4, -1}); });
  VERIFY2(contains(bad, "[4, -1]"), bad.c_str());
}

TEST(contiguousReturnsSameWhenContiguous) {
  const Tensor a = arange(12).reshape({3, 4});
  VERIFY(a.contiguous().is_same(a));
  const Tensor t = a.t();
  const Tensor c = t.contiguous();
  VERIFY(!c.is_same(t));
  VERIFY(c.storage() != a.storage());
  VERIFY(c.is_contiguous());
  COMPARE(shape_str(c.strides()), std::string("[3, 1]"));
  compare_values(c, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  // clone always copies
  const Tensor k = a.clone();
  VERIFY(k.storage() != a.storage());
  compare_values(k, a.to_vector());
}

TEST(factories) {
  compare_values(zeros({2, 2}), {0, 0, 0, 0});
  compare_values(ones({3}), {1, 1, 1});
  compare_values(full({2, 1}, -1.5f), {-1.5f, -1.5f});
  compare_values(zeros_like(ones({2, 3})), std::vector<float>(6, 0.f));
  compare_values(ones_like(zeros({2})), {1, 1});
  COMPARE(shape_str(zeros_like(ones({2, 3})).shape()), std::string("[2, 3]"));

  compare_values(arange(5), {0, 1, 2, 3, 4});
  compare_values(arange(1.f, 2.f, 0.25f), {1.f, 1.25f, 1.5f, 1.75f});
  compare_values(arange(3.f, 0.f, -1.f), {3, 2, 1});
  COMPARE(arange(0.f, 1.f, 0.1f).numel(), int64_t(10));
  COMPARE(arange(2.f, 1.f, 1.f).numel(), int64_t(0));
  VERIFY_THROWS(ValueError, arange(0.f, 1.f, 0.f));

  const std::vector<float> vals{1, 2, 3, 4, 5, 6};
  const Tensor fv = from_vector(vals, {2, 3});
  COMPARE(shape_str(fv.shape()), std::string("[2, 3]"));
  COMPARE(fv.at({1, 0}), 4.f);
  const std::string msg = message_of<ShapeError>([&] { (void)from_vector(vals, {4, 2}); });
  VERIFY2(contains(msg, "[4, 2]"), msg.c_str());
  VERIFY2(contains(msg, "6"), msg.c_str());

  float buf[4] = {9, 8, 7, 6};
  const Tensor fb = from_buffer(buf, {2, 2});
  buf[0] = -1;  // copied: later changes to the buffer don't show
  compare_values(fb, {9, 8, 7, 6});
}

TEST(randomFactoriesHaveTheRightDistribution) {
  Generator gen(123);
  const std::vector<float> u = rand({100000}, &gen).to_vector();
  float lo = 1, hi = 0;
  for (float x : u) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  VERIFY(lo >= 0.f);
  VERIFY(hi < 1.f);
  VERIFY(lo < 0.001f && hi > 0.999f);
  VERIFY(std::fabs(mean_of(u) - 0.5) < 0.01);
  VERIFY(std::fabs(std_of(u) - std::sqrt(1.0 / 12)) < 0.01);

  const std::vector<float> n = randn({100000}, &gen).to_vector();
  VERIFY2(std::fabs(mean_of(n)) < 0.02, cat(mean_of(n)));
  VERIFY2(std::fabs(std_of(n) - 1.0) < 0.02, cat(std_of(n)));
  int beyond2 = 0;
  for (float x : n) beyond2 += std::fabs(x) > 2.f;
  VERIFY(std::fabs(beyond2 / 100000.0 - 0.0455) < 0.005);  // ~4.55% outside 2 sigma

  const std::vector<float> w = uniform({50000}, -2.f, 3.f, &gen).to_vector();
  for (float x : w) VERIFY(x >= -2.f && x <= 3.f);
  VERIFY(std::fabs(mean_of(w) - 0.5) < 0.05);
}

TEST(seededGeneratorsReproduce) {
  Generator g1(42), g2(42), g3(43);
  COMPARE(g1.seed(), uint64_t(42));
  const std::vector<float> a = randn({1000}, &g1).to_vector();
  const std::vector<float> b = randn({1000}, &g2).to_vector();
  const std::vector<float> c = randn({1000}, &g3).to_vector();
  VERIFY(a == b);
  VERIFY(a != c);
  // The stream continues: the next draw differs from the first.
  VERIFY(randn({1000}, &g1).to_vector() != a);
  // Reseeding restarts the stream.
  g1.manual_seed(42);
  VERIFY(randn({1000}, &g1).to_vector() == a);

  manual_seed(7);
  const std::vector<float> d1 = rand({500}).to_vector();
  const std::vector<float> n1 = randn({3, 5}).to_vector();
  manual_seed(7);
  const std::vector<float> d2 = rand({500}).to_vector();
  const std::vector<float> n2 = randn({3, 5}).to_vector();
  VERIFY(d1 == d2);
  VERIFY(n1 == n2);
  COMPARE(default_generator().seed(), uint64_t(7));
  manual_seed(8);
  VERIFY(rand({500}).to_vector() != d1);
}

TEST(printing) {
  const Tensor a = from_vector({0.5f, -1.f, 2.25f, 3.f, 4.f, 5.125f}, {2, 3});
  const std::string s = a.str();
  VERIFY2(contains(s, "shape=[2, 3]"), s.c_str());
  VERIFY2(contains(s, "tensor("), s.c_str());
  for (const char* num : {"0.5000", "-1.0000", "2.2500", "3.0000", "4.0000", "5.1250"})
    VERIFY2(contains(s, num), (s + " lacks " + num).c_str());
  VERIFY2(!contains(s, "..."), s.c_str());
  VERIFY2(s.find("0.5000") < s.find("5.1250"), s.c_str());  // row-major order

  // operator<< gives the same text
  std::ostringstream os;
  os << a;
  COMPARE(os.str(), s);

  // a transposed view prints its logical order
  const std::string ts = a.t().str();
  VERIFY2(contains(ts, "shape=[3, 2]"), ts.c_str());
  VERIFY2(ts.find("3.0000") < ts.find("-1.0000"), ts.c_str());

  const std::string sc = scalar(1.5f).str();
  VERIFY2(contains(sc, "1.5000") && contains(sc, "shape=[]"), sc.c_str());

  const Tensor w = ones({2}).requires_grad_();
  VERIFY2(contains(w.str(), "requires_grad=true"), w.str().c_str());

  // large tensors are summarised
  const std::string big = arange(2000).str();
  VERIFY2(contains(big, "..."), big.substr(0, 200).c_str());
  VERIFY2(contains(big, "1999.0000"), big.c_str());
  VERIFY2(contains(big, "2.0000"), big.c_str());
  VERIFY2(!contains(big, "1000.0000"), "the middle of a large tensor must be elided");
  VERIFY2(big.size() < 200, big.c_str());
  VERIFY2(contains(big, "shape=[2000]"), big.c_str());
  const std::string big2 = arange(3000).reshape({30, 100}).str();
  VERIFY2(contains(big2, "..."), big2.c_str());
  VERIFY2(contains(big2, "2999.0000"), big2.c_str());
  VERIFY2(!contains(big2, "1550.0000"), big2.c_str());
}

TEST(shapeErrorsSayExpectedVersusGot) {
  const std::string msg = message_of<ShapeError>([] { (void)add(ones({2, 3}), ones({4})); });
  VERIFY2(contains(msg, "[2, 3]"), msg.c_str());
  VERIFY2(contains(msg, "[4]"), msg.c_str());
  VERIFY2(contains(msg, "add"), msg.c_str());

  const std::string mm = message_of<ShapeError>([] { (void)matmul(ones({2, 3}), ones({4, 5})); });
  VERIFY2(contains(mm, "[2, 3]") && contains(mm, "[4, 5]"), mm.c_str());

  const std::string cat = message_of<ShapeError>([] { (void)concat({ones({2, 3}), ones({2, 4})}, 0); });
  VERIFY2(contains(cat, "[2, 4]") && contains(cat, "[2, 3]"), cat.c_str());

  // broadcasting that works does not throw
  COMPARE(shape_str(add(ones({2, 3}), ones({3})).shape()), std::string("[2, 3]"));
  COMPARE(shape_str(mul(ones({4, 1, 3}), ones({2, 1})).shape()), std::string("[4, 2, 3]"));
}

TEST(elementAccessErrors) {
  const Tensor a = arange(6).reshape({2, 3});
  const std::string msg = message_of<ShapeError>([&] { (void)a.item(); });
  VERIFY2(contains(msg, "[2, 3]"), msg.c_str());
  COMPARE(ones({1, 1}).item(), 1.f);

  COMPARE(a.at({1, 2}), 5.f);
  VERIFY_THROWS(IndexError, a.at({2, 0}));
  VERIFY_THROWS(IndexError, a.at({0, 3}));
  VERIFY_THROWS(IndexError, a.at({0, -1}));
  VERIFY_THROWS(IndexError, a.at({0}));
  const std::string range = message_of<IndexError>([&] { (void)a.at({0, 3}); });
  VERIFY2(contains(range, "3") && contains(range, "size 3"), range.c_str());
}

TEST(inplaceOps) {
  Tensor a = zeros({2, 3});
  const uint64_t v0 = a.storage()->version;
  a.fill_(2.f);
  compare_values(a, {2, 2, 2, 2, 2, 2});
  VERIFY(a.storage()->version > v0);

  a.copy_(from_vector({1, 2, 3}, {3}));  // broadcast over rows
  compare_values(a, {1, 2, 3, 1, 2, 3});
  VERIFY_THROWS(ShapeError, a.copy_(ones({2})));

  a.add_(from_vector({10, 20}, {2, 1}), 0.5f);  // a += 0.5 * [[10], [20]]
  compare_values(a, {6, 7, 8, 11, 12, 13});
  a.add_(ones({2, 3}));
  compare_values(a, {7, 8, 9, 12, 13, 14});

  a.mul_(-2.f);
  compare_values(a, {-14, -16, -18, -24, -26, -28});
  a.zero_();
  compare_values(a, {0, 0, 0, 0, 0, 0});

  // on a non-contiguous view, only the viewed elements change
  Tensor b = arange(6).reshape({2, 3});
  b.t().narrow(0, 1, 1).mul_(10.f);  // column 1
  compare_values(b, {0, 10, 2, 3, 40, 5});
  b.t().copy_(from_vector({-1, -2}, {2}));  // every row of b.t() becomes [-1, -2]
  compare_values(b, {-1, -1, -1, -2, -2, -2});
}

TEST(inplaceOnTensorRequiringGrad) {
  Tensor w = ones({3});
  w.requires_grad_();
  VERIFY(GradMode::enabled());
  VERIFY_THROWS(AutogradError, w.fill_(0.f));
  VERIFY_THROWS(AutogradError, w.copy_(zeros({3})));
  VERIFY_THROWS(AutogradError, w.add_(ones({3}), 2.f));
  VERIFY_THROWS(AutogradError, w.mul_(3.f));
  const std::string msg = message_of<AutogradError>([&] { w.add_(ones({3})); });
  VERIFY2(contains(msg, "NoGradGuard"), msg.c_str());
  compare_values(w, {1, 1, 1});  // the refused updates changed nothing
  {
    NoGradGuard g;
    w.add_(ones({3}), 2.f);
    w.mul_(2.f);
  }
  compare_values(w, {6, 6, 6});
  VERIFY(w.requires_grad());
  VERIFY(GradMode::enabled());
  // A tensor that does not require grad can be updated in grad mode.
  Tensor plain = ones({2});
  plain.add_(ones({2}));
  compare_values(plain, {2, 2});
}

TEST(cudaRequestWithoutCudaThrows) {
  VERIFY_THROWS(DeviceError, zeros({2}, Device::cuda()));
  VERIFY_THROWS(DeviceError, ones({2}).to(Device::cuda()));
  VERIFY_THROWS(DeviceError, memory_stats(Device::cuda()));
  const std::string msg = message_of<DeviceError>([] { (void)zeros({2}, Device::cuda(1)); });
  VERIFY2(contains(msg, "cuda:1"), msg.c_str());
  const Tensor a = ones({2});
  VERIFY(a.to(Device::cpu()).is_same(a));
}

TEST(allocatorReusesFreedBlocks) {
  // Warm up: allocate and free the sizes once.
  auto round = [] {
    Tensor a = zeros({1000});
    Tensor b = zeros({37, 3});
    Tensor c = zeros({64, 64});
    Tensor d = add(a, 1.f);  // an op's output too
    (void)d;
  };
  round();
  const MemoryStats before = memory_stats();
  for (int i = 0; i < 200; ++i) round();
  const MemoryStats after = memory_stats();
  COMPARE(after.system_allocations, before.system_allocations);  // every request served from the cache
  COMPARE(after.allocations, before.allocations + 200 * 4);
  COMPARE(after.bytes_in_use, before.bytes_in_use);

  // bytes_in_use counts live storages by size class
  const MemoryStats s0 = memory_stats();
  {
    const Tensor t = empty({1000});  // 4000 bytes -> 4032 (64-byte classes below 4 KiB)
    COMPARE(memory_stats().bytes_in_use - s0.bytes_in_use, int64_t(4032));
    VERIFY(memory_stats().peak_bytes_in_use >= memory_stats().bytes_in_use);
  }
  COMPARE(memory_stats().bytes_in_use, s0.bytes_in_use);
  VERIFY(memory_stats().bytes_cached >= 4032);

  // views allocate nothing
  const Tensor base = empty({10, 10});
  const MemoryStats s1 = memory_stats();
  const Tensor v = base.t().narrow(0, 2, 3).unsqueeze(0);
  COMPARE(memory_stats().allocations, s1.allocations);
  COMPARE(memory_stats().bytes_in_use, s1.bytes_in_use);
}

