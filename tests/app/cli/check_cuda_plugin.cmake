# The CUDA plug-in (core/cuda/plugin.h): without it every request for a GPU says where it looked,
# and the CPU still trains; with it, only what asks for a GPU opens it (at the end). First
# PLEXUS_CUDA_PLUGIN names a file that is not there, as a machine whose package lost
# libplexus_cuda.so would have it. A build without CUDA never looks: it says so.
include(${CMAKE_CURRENT_LIST_DIR}/cli_run.cmake)
set(missing ${WORK}/no-plugin-here/libplexus_cuda.so)
set(ENV{PLEXUS_CUDA_PLUGIN} ${missing})

if(CUDA_BUILT)
  set(why "no CUDA device: the CUDA plug-in libplexus_cuda.so was not found (looked for ${missing})")
else()
  set(why "no CUDA device: this build has no CUDA support")
endif()
run(0 devices)
expect("${why}" "${OUT}" "devices without the plug-in")
run(1 train ${EXAMPLES}/mnist_mlp.plexus --device cuda:0 --epochs 1)
expect("cuda:0 is not available: ${why}" "${ERR}" "training on cuda:0 without the plug-in")
if(EXISTS ${MNIST}/train-images-idx3-ubyte)
  run(0 train --data ${MNIST} --train-subset 500 --epochs 1 --batch-size 50)
  expect("epoch 1/1:" "${OUT}" "training on the CPU without the plug-in")
endif()
unset(ENV{PLEXUS_CUDA_PLUGIN})

# With the plug-in there: a command that asks for no GPU never opens it (nor, through it, the CUDA
# libraries); `devices` does (in a CUDA build), which shows the dynamic loader's log is read.
function(loaded what out_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_DEBUG=files ${CLI} ${ARGN} RESULT_VARIABLE code
                  OUTPUT_QUIET ERROR_VARIABLE err WORKING_DIRECTORY ${WORK})
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "plexus-cli ${ARGN}: exit ${code}\n${err}")
  endif()
  string(REGEX MATCHALL "file=[^ ]*(libplexus_cuda|libcublas|libcudnn|libnccl)[^ ]*" libs "${err}")
  set(${out_var} "${libs}" PARENT_SCOPE)
endfunction()
foreach(args "--version" "check;${EXAMPLES}/mnist_mlp.plexus")
  loaded("${args}" libs ${args})
  if(libs)
    message(FATAL_ERROR "plexus-cli ${args} loaded CUDA libraries: ${libs}")
  endif()
endforeach()
if(CUDA_BUILT)
  loaded(devices libs devices)
  if(NOT libs MATCHES "libplexus_cuda")
    message(FATAL_ERROR "plexus-cli devices did not open the CUDA plug-in (LD_DEBUG=files shows no libplexus_cuda)")
  endif()
endif()
