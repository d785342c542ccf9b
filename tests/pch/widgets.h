// What the widgets' and the app's test suites include, precompiled once for all of them
// (tests/CMakeLists.txt).
#pragma once
#include <QtWidgets>

#include "cli.h"
