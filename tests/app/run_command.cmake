# run(WHAT COMMAND ARGS...) for the check_*.cmake scripts: runs the command (in SOURCE when it is
# set) and fails the test with its exit status and output unless it exits 0; its standard output
# is left in OUT.
function(run what)
  set(dir ${CMAKE_CURRENT_BINARY_DIR})
  if(DEFINED SOURCE)
    set(dir ${SOURCE})
  endif()
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY ${dir})
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${what}: exit ${code}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
endfunction()
