// A suite of deliberate outcomes for support/check.h: check_selftest.cmake runs it and holds
// each line of its report to what the harness must say, so a harness that passed everything
// (or compared floats differently from Qt Test's QCOMPARE) fails ctest.
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/check.h"

namespace {

struct Row {
  std::string name;
  int actual;
  int expected;
};
std::vector<Row> rows() { return {{"equal", 1, 1}, {"unequal", 1, 2}}; }

// Fails through a helper, as suites do, and the caller stops on check::failed().
void helper_that_fails() { COMPARE(2 + 2, 5); }

}  // namespace

TEST(passFuzzyFloat) {
  COMPARE(1.0f, 1.000001f);                // within Qt's 1e-5 relative bound for float
  COMPARE(1.0, 1.0 + 1e-13);               // and 1e-12 for double
  COMPARE(0.0, 1e-13);                     // near zero: an absolute bound
  COMPARE(std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN());
  COMPARE(1.0f, 1.0);                      // float against double compares as double
  const char* text = "abc";
  COMPARE(text, "abc");                    // C strings by content
  COMPARE(std::string("abc"), "abc");
  VERIFY_THROWS(std::invalid_argument, throw std::invalid_argument("x"));
  VERIFY_THROWS(std::logic_error, throw std::invalid_argument("derived counts"));
}
TEST(failFloatBeyondBound) { COMPARE(1.0f, 1.0001f); }
TEST(failDoubleBeyondBound) { COMPARE(1.0, 1.0 + 1e-10); }
TEST(failVectorsShown) { COMPARE((std::vector<int>{1, 2}), (std::vector<int>{1, 3})); }
TEST(failVerify2Message) { VERIFY2(1 > 2, std::string("the message")); }
TEST(failWrongException) { VERIFY_THROWS(std::out_of_range, throw std::runtime_error("other")); }
TEST(failNoException) { VERIFY_THROWS(std::runtime_error, (void)0); }
TEST(failEscapedException) { throw std::runtime_error("escaped"); }
TEST(failStopsAtFirst) {
  helper_that_fails();
  if (plexus::check::failed()) return;
  FAIL("not reached");
}
TEST(skipWithReason) { SKIP("the reason"); }
TEST_ROWS(rowsEach, rows()) { COMPARE(row.actual, row.expected); }
