// The object that carries a group of test suites' precompiled header (tests/CMakeLists.txt).
