// What the core's test suites include, precompiled once for all of them (tests/CMakeLists.txt):
// the test harness and the standard library, nothing of Plexus, so a suite depends on the
// headers it names and no more.
#pragma once
#include "support/check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
