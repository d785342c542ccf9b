# cpp_export: the C++ programs `plexus-cli export --cpp` writes, built against the installed core
# (cmake/core_install.cmake) and run against Plexus' own outputs.
#   cmake -DCLI=plexus-cli -DMODEL_OUTPUTS=model_outputs -DBUILD=<build dir> -DWORK=<dir>
#         -DPROJECTS=<a,b> -DGENERATOR=<generator> -DCXX=<compiler> [-DLAUNCHER=ccache]
#         [-DSANITIZE=address,undefined] -P check_cpp_export.cmake
# (A sanitized core needs its sanitizers in the program's compile and link too.)
# 1. `cmake --install BUILD --component plexus_dev` into WORK/prefix;
# 2. per project: model_outputs writes weights (initial ones moved at random) and Plexus' outputs
#    on its first 100 test examples (skipped when its dataset is absent), and `plexus-cli export
#    --cpp` writes its program;
# 3. one CMake project, find_package(Plexus) and an executable per program, configured and built
#    as a user would;
# 4. each program run on the same raw inputs: its outputs must match Plexus' within 1e-6 of their
#    largest magnitude (model_outputs --compare; the same core computes both, so they are equal but
#    for the compiler's own choices).
# Every example project (tests/CMakeLists.txt), each left out without its dataset: each program
# compiles the core's headers, some 5 s of CPU a program without ccache.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "${command} failed (${rc}):\n${out}\n${err}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
run(${CMAKE_COMMAND} --install ${BUILD} --component plexus_dev --prefix ${WORK}/prefix)
file(MAKE_DIRECTORY ${WORK}/app)

set(programs "")
set(lists "cmake_minimum_required(VERSION 3.20)\nproject(exported_models CXX)\nfind_package(Plexus REQUIRED)\n")
string(REPLACE "," ";" projects "${PROJECTS}")
foreach(project ${projects})
  get_filename_component(name ${project} NAME_WE)
  execute_process(COMMAND ${MODEL_OUTPUTS} ${project} ${WORK}/${name} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(rc EQUAL 77)
    message(STATUS "${out}")
    continue()
  elseif(NOT rc EQUAL 0)
    message(FATAL_ERROR "model_outputs ${project} failed (${rc}): ${err}")
  endif()
  run(${CLI} export ${WORK}/${name}/${name}.plexus --checkpoint ${WORK}/${name}/weights.safetensors --cpp ${WORK}/app/${name}.cpp)
  string(APPEND lists "add_executable(${name} ${name}.cpp)\ntarget_link_libraries(${name} PRIVATE Plexus::core)\n")
  list(APPEND programs ${name})
endforeach()
if(NOT programs)
  message("cpp_export skipped: no project's dataset is at hand")
  return()
endif()
file(WRITE ${WORK}/app/CMakeLists.txt "${lists}")

set(flags "")
if(LAUNCHER)
  list(APPEND flags -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
if(SANITIZE)
  list(APPEND flags "-DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE}" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE}")
endif()
run(${CMAKE_COMMAND} -S ${WORK}/app -B ${WORK}/app/build -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK}/prefix ${flags})
run(${CMAKE_COMMAND} --build ${WORK}/app/build)
foreach(name ${programs})
  run(${WORK}/app/build/${name} ${WORK}/${name}/weights.safetensors ${WORK}/${name}/outputs.safetensors
      ${WORK}/${name}/cpp.safetensors)
  run(${MODEL_OUTPUTS} --compare ${WORK}/${name}/outputs.safetensors ${WORK}/${name}/cpp.safetensors 1e-6)
  message(STATUS "${name}: ${output}")
endforeach()
