# Runs a Qt Test suite without some of its test functions: the ctest entry of a suite whose
# functions that need what a machine may lack have entries of their own (plexus_qt_suite_part in
# CMakeLists.txt). Qt Test runs the functions named on its command line and cannot be told to
# leave some out, so this asks the built suite for its functions (-functions) and names the rest:
# a function added to the suite later is run here without anyone listing it.
#   cmake -DSUITE=<executable> -DLEAVE_OUT=<function>,<function>... -P run_qt_suite_without.cmake
# The suite's output passes through (ctest's skip expression reads it); a failure fails this.
cmake_policy(VERSION 3.25)
execute_process(COMMAND ${SUITE} -functions OUTPUT_VARIABLE listed RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "${SUITE} -functions failed (${code})")
endif()
string(REPLACE "," ";" leave_out "${LEAVE_OUT}")
string(REGEX MATCHALL "[A-Za-z_][A-Za-z_0-9]*\\(\\)" functions "${listed}")
list(TRANSFORM functions REPLACE "\\(\\)$" "")
foreach(function ${leave_out})
  if(NOT function IN_LIST functions)
    message(FATAL_ERROR "${SUITE} has no test function ${function} to leave out (renamed?)")
  endif()
endforeach()
list(REMOVE_ITEM functions ${leave_out})
if(NOT functions)
  message(FATAL_ERROR "${SUITE}: every test function is left out, so its own entry would run them all")
endif()
execute_process(COMMAND ${SUITE} ${functions} RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "${SUITE} failed (${code})")
endif()
