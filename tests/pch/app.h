// What the app's test suites include, precompiled once for all of them (tests/CMakeLists.txt):
// the widgets' set, compiled with plexus_app's flags.
#pragma once
#include "widgets.h"
