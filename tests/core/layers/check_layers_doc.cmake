# docs/layers.md is generated from the layer registry: fail when the committed file differs
# from what `plexus-cli layers --markdown` prints now, and say how to regenerate it.
execute_process(COMMAND ${CLI} layers --markdown RESULT_VARIABLE code OUTPUT_VARIABLE fresh ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "plexus-cli layers --markdown: exit ${code}\n${err}")
endif()
if(NOT EXISTS ${DOC})
  message(FATAL_ERROR "${DOC} is missing: generate it with scripts/gen-layers-doc (after building) and commit it")
endif()
file(READ ${DOC} committed)
if(NOT fresh STREQUAL committed)
  message(FATAL_ERROR "docs/layers.md is out of date with the layer registry (core/layers/).\n"
                      "Regenerate it with\n    PLEXUS_BUILD_DIR=<your build dir> scripts/gen-layers-doc\n"
                      "and commit the result.")
endif()
