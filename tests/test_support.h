#pragma once
// Small helpers shared by the test suites.
#include <exception>
#include <string>

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

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace plexus::testing
