# For the check_*.cmake scripts that drive plexus-cli (CLI) in WORK: run(CODE ARGS...) runs it and
# fails unless it exits CODE, leaving its stdout and stderr in OUT and ERR; expect(TEXT HAYSTACK
# WHAT) fails unless HAYSTACK contains TEXT.
function(run expected_code)
  execute_process(COMMAND ${CLI} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY ${WORK})
  if(NOT code EQUAL expected_code)
    message(FATAL_ERROR "plexus-cli ${ARGN}: exit ${code}, expected ${expected_code}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
endfunction()

function(expect text haystack what)
  string(FIND "${haystack}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what}: expected to find '${text}' in:\n${haystack}")
  endif()
endfunction()
