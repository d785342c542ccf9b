// What plexus-cli's test suites (tests/app/cli/) include, precompiled once for all of them
// (tests/CMakeLists.txt): Qt Test and the standard library, nothing of Plexus, so a suite depends on
// the headers it names and no more.
#pragma once
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
