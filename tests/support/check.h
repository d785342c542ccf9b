#pragma once
// The core's test suites, without Qt: a suite is one executable of TEST(name) functions that
// register themselves (no second list of names to forget one in). The checks read as Qt Test's
// do and mean the same (COMPARE(actual, expected) compares floating point as QCOMPARE does, a
// failed check returns from the test function, the next test still runs), so the widgets' and
// the app's Qt Test suites and these read alike.
//
//   TEST(reshapeKeepsTheData) { ... COMPARE(t.shape(), Shape{2, 3}); ... }
//
//   struct Row { std::string name; int64_t n; double expected; };   // `name` tags the row
//   std::vector<Row> sums() { return {{"one", 1, 1.0}, {"three", 3, 6.0}}; }
//   TEST_ROWS(sumOfFirst, sums()) { COMPARE(sum_to(row.n), row.expected); }
//
// The runner (check.cpp) takes test names or glob patterns (`mnist*`; `-mnist*` leaves out)
// and exits 0 when nothing failed, 1 when something did, and 77 (ctest's SKIP_RETURN_CODE)
// when every test that ran was skipped: a suite that ran nothing tells ctest so.
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <ranges>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace plexus::check {

// One registered test: a name and its body; a data-driven one (TEST_ROWS) instead lists its
// rows' tags and runs one row at a time.
struct Test {
  std::string name;
  std::function<void()> run;
  std::function<std::vector<std::string>()> row_tags;
  std::function<void(size_t)> run_row;
};
std::vector<Test>& registry();

struct Registrar {
  explicit Registrar(Test t) { registry().push_back(std::move(t)); }
};

// The running test's state: checks record a failure or a skip here, then return.
void record_failure(const std::string& message, const char* file, int line);
void record_skip(const std::string& reason, const char* file, int line);
bool failed();                    // whether the running test (row) has failed yet
const std::string& current_row();  // the running row's tag ("" outside TEST_ROWS)

// How a value prints in a failure message: what operator<< gives, ranges element by element.
template <class T>
std::string show(const T& v);

template <class T>
concept Streamable = requires(std::ostream& o, const T& v) { o << v; };

template <class T>
void show_into(std::ostream& o, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    o << (v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view> ||
                       std::is_convertible_v<const T&, const char*>) {
    if constexpr (std::is_pointer_v<T>) {
      if (v == nullptr) {
        o << "(null)";
        return;
      }
    }
    o << '"' << v << '"';
  } else if constexpr (std::is_same_v<T, char> || std::is_same_v<T, signed char> ||
                       std::is_same_v<T, unsigned char>) {
    o << int(v);
  } else if constexpr (std::is_enum_v<T>) {
    o << static_cast<std::underlying_type_t<T>>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    o.precision(std::is_same_v<T, float> ? 9 : 17);
    o << v;
  } else if constexpr (Streamable<T>) {
    o << v;
  } else if constexpr (std::ranges::input_range<const T>) {
    o << '[';
    size_t i = 0;
    for (const auto& e : v) {
      if (i) o << ", ";
      if (++i > 64) {
        o << "...";
        break;
      }
      show_into(o, e);
    }
    o << ']';
  } else if constexpr (requires { v.first; v.second; }) {
    o << '(';
    show_into(o, v.first);
    o << ", ";
    show_into(o, v.second);
    o << ')';
  } else {
    o << "<" << sizeof(T) << "-byte value>";
  }
}

template <class T>
std::string show(const T& v) {
  std::ostringstream o;
  show_into(o, v);
  return o.str();
}

// The largest |a[i] - b[i]| / max(1, |b[i]|): a computed result against a reference, relative
// where the reference is large; infinity when the lengths differ.
inline double max_error(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double e = 0;
  for (size_t i = 0; i < a.size(); ++i)
    e = std::max(e, std::abs(double(a[i]) - b[i]) / std::max(1.0, std::abs(double(b[i]))));
  return e;
}

// QCOMPARE's meaning of "the same": floating point within Qt's fuzzy bounds (relative 1e-5 for
// float, 1e-12 for double; near zero an absolute bound; NaN equals NaN; infinities by sign),
// C strings by content, everything else by ==.
template <std::floating_point T>
bool fuzzy_same(T actual, T expected) {
  constexpr T null_bound = std::is_same_v<T, float> ? T(1e-5) : T(1e-12);
  constexpr T scale = std::is_same_v<T, float> ? T(1e5) : T(1e12);
  if (std::isinf(expected)) return std::isinf(actual) && (expected < 0) == (actual < 0);
  if (std::isnan(expected)) return std::isnan(actual);
  if (std::abs(expected) <= null_bound) return std::abs(actual) <= null_bound;
  return std::abs(actual - expected) * scale <= std::min(std::abs(actual), std::abs(expected));
}

template <class A, class E>
bool same(const A& actual, const E& expected) {
  if constexpr (std::is_floating_point_v<A> && std::is_floating_point_v<E>) {
    if constexpr (std::is_same_v<A, float> && std::is_same_v<E, float>)
      return fuzzy_same<float>(actual, expected);
    else
      return fuzzy_same<double>(double(actual), double(expected));
  } else if constexpr (std::is_convertible_v<const A&, const char*> && std::is_convertible_v<const E&, const char*> &&
                       !std::is_same_v<A, std::nullptr_t> && !std::is_same_v<E, std::nullptr_t>) {
    const char* a = actual;
    const char* e = expected;
    return a == e || (a && e && std::strcmp(a, e) == 0);
  } else {
    return actual == expected;
  }
}

template <class A, class E>
bool compare(const A& actual, const E& expected, const char* actual_text, const char* expected_text, const char* file,
             int line) {
  if (same(actual, expected)) return true;
  record_failure(std::string("Compared values are not the same\n   Actual   (") + actual_text + "): " + show(actual) +
                     "\n   Expected (" + expected_text + "): " + show(expected),
                 file, line);
  return false;
}

inline std::string message_text(const char* m) { return m ? m : ""; }
inline std::string message_text(const std::string& m) { return m; }
inline std::string message_text(std::string_view m) { return std::string(m); }

// A data-driven test: make() gives a range of structs with a `name` (the row's tag); the body
// runs once per row, each row passing or failing on its own, as Qt Test's _data() rows do. The
// rows are made when the test runs, not during static initialisation.
template <class Rows, class Row>
Test rows_test(const char* name, Rows (*make)(), void (*body)(const Row&)) {
  auto rows = std::make_shared<std::vector<Row>>();
  auto ensure = [rows, make] {
    if (rows->empty())
      for (auto&& r : make()) rows->push_back(r);
  };
  return Test{name, {},
              [rows, ensure] {
                ensure();
                std::vector<std::string> tags;
                for (const Row& r : *rows) tags.push_back(std::string(r.name));
                return tags;
              },
              [rows, ensure, body](size_t i) {
                ensure();
                body((*rows)[i]);
              }};
}

}  // namespace plexus::check

#define PLEXUS_CHECK_CAT2(a, b) a##b
#define PLEXUS_CHECK_CAT(a, b) PLEXUS_CHECK_CAT2(a, b)

#define TEST(name)                                                                                          \
  static void name();                                                                                       \
  static const ::plexus::check::Registrar PLEXUS_CHECK_CAT(plexus_check_registrar_, name){                   \
      ::plexus::check::Test{#name, &name, {}, {}}};                                                         \
  static void name()

#define TEST_ROWS(name, rows_expr)                                                                          \
  using PLEXUS_CHECK_CAT(name, _Rows) = std::remove_cvref_t<decltype(rows_expr)>;                           \
  static void name(const std::ranges::range_value_t<PLEXUS_CHECK_CAT(name, _Rows)>& row);                   \
  static const ::plexus::check::Registrar PLEXUS_CHECK_CAT(plexus_check_registrar_, name){                   \
      ::plexus::check::rows_test(#name, +[] { return PLEXUS_CHECK_CAT(name, _Rows)(rows_expr); }, &name)};   \
  static void name([[maybe_unused]] const std::ranges::range_value_t<PLEXUS_CHECK_CAT(name, _Rows)>& row)

#define VERIFY(cond)                                                                        \
  do {                                                                                      \
    if (!static_cast<bool>(cond)) {                                                         \
      ::plexus::check::record_failure("'" #cond "' returned FALSE.", __FILE__, __LINE__);   \
      return;                                                                               \
    }                                                                                       \
  } while (false)

#define VERIFY2(cond, message)                                                                                   \
  do {                                                                                                           \
    if (!static_cast<bool>(cond)) {                                                                              \
      ::plexus::check::record_failure("'" #cond "' returned FALSE. (" +                                          \
                                          ::plexus::check::message_text(message) + ")",                          \
                                      __FILE__, __LINE__);                                                       \
      return;                                                                                                    \
    }                                                                                                            \
  } while (false)

#define COMPARE(actual, expected)                                                                       \
  do {                                                                                                  \
    if (!::plexus::check::compare(actual, expected, #actual, #expected, __FILE__, __LINE__)) return;    \
  } while (false)

// Passes when `expr` throws an E (or a type derived from it); anything else fails the test.
#define VERIFY_THROWS(E, expr)                                                                                    \
  do {                                                                                                            \
    bool plexus_check_threw_ = false;                                                                             \
    try {                                                                                                         \
      (void)(expr);                                                                                               \
    } catch (const E&) {                                                                                          \
      plexus_check_threw_ = true;                                                                                 \
    } catch (const std::exception& plexus_check_e_) {                                                             \
      ::plexus::check::record_failure(std::string("Expected exception of type " #E " to be thrown, but caught "   \
                                                  "another std::exception: ") + plexus_check_e_.what(),           \
                                      __FILE__, __LINE__);                                                        \
      return;                                                                                                     \
    } catch (...) {                                                                                               \
      ::plexus::check::record_failure("Expected exception of type " #E " to be thrown, but caught unknown type",  \
                                      __FILE__, __LINE__);                                                        \
      return;                                                                                                     \
    }                                                                                                             \
    if (!plexus_check_threw_) {                                                                                   \
      ::plexus::check::record_failure("Expected exception of type " #E " to be thrown, but no exception caught",  \
                                      __FILE__, __LINE__);                                                        \
      return;                                                                                                     \
    }                                                                                                             \
  } while (false)

#define FAIL(message)                                                                            \
  do {                                                                                           \
    ::plexus::check::record_failure(::plexus::check::message_text(message), __FILE__, __LINE__); \
    return;                                                                                      \
  } while (false)

#define SKIP(reason)                                                                            \
  do {                                                                                          \
    ::plexus::check::record_skip(::plexus::check::message_text(reason), __FILE__, __LINE__);    \
    return;                                                                                     \
  } while (false)
