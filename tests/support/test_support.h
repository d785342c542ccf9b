#pragma once
// Small helpers shared by the test suites.
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace plexus::testing {

// The what() of the exception of type E that f() throws, or a marker saying what happened
// instead, so a test can assert on the message and see the surprise when it fails.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<wrong exception type: ") + e.what() + ">";
  }
  return "<no exception>";
}

// C = op(A)·op(B) in double, row-major, A's rows lda apart (B's ldb): the reference for
// the matrix-product kernels.
inline std::vector<double> reference_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                                          int64_t lda, const float* b, int64_t ldb) {
  std::vector<double> c(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double(ta ? a[p * lda + i] : a[i * lda + p]) * double(tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[size_t(i * n + j)] = s;
    }
  return c;
}

// The arguments as one string, numbers as `<<` writes them (6 significant digits): failure
// messages.
template <class... A>
std::string cat(const A&... a) {
  std::ostringstream o;
  (o << ... << a);
  return o.str();
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Checks that message `s` contains `part`, showing both when it does not.
#define VERIFY_CONTAINS(s, part)                          \
  VERIFY2(::plexus::testing::contains((s), (part)), "'" + \
          std::string(s) + "' does not contain '" + std::string(part) + "'")

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes the bytes as they are (test fixtures, malformed files); throws if that fails.
inline void write_raw(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out.good()) throw std::runtime_error("cannot write test file " + p.string());
}

}  // namespace plexus::testing
