# The model a person trains in the GUI is the model the command line uses: the MNIST MLP example
# trained by clicking Train (plexus --train, offscreen) reaches 97% validation accuracy, and its
# final checkpoint evaluates with `plexus-cli eval` to the test accuracy the dashboard showed, and
# `plexus-cli predict` on 20 MNIST test images saved as PNGs gives each the class and probability
# that eval --predictions gives it (test_predict_cli, on this checkpoint).
# Variables: GUI, CLI, PREDICT_TEST (executables), SOURCE (the repository), WORK (a scratch folder).
cmake_policy(VERSION 3.25)
if(NOT EXISTS ${SOURCE}/data/mnist/train-images-idx3-ubyte)
  message("MNIST not in data/mnist: skipped")
  return()
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

include(${CMAKE_CURRENT_LIST_DIR}/run_command.cmake)

set(ENV{QT_QPA_PLATFORM} offscreen)
set(ENV{XDG_CONFIG_HOME} ${WORK}/config)
set(ENV{PLEXUS_RECOVERY_DIR} ${WORK}/recovery)
set(ENV{PLEXUS_RUNS_DIR} ${WORK}/gui-runs)
run("the GUI's run" ${GUI} --train --until-done examples/mnist_mlp.plexus)
unset(ENV{PLEXUS_RUNS_DIR})
if(NOT OUT MATCHES "completed after 5 epochs, validation accuracy (9[7-9]|100)\\.")
  message(FATAL_ERROR "the GUI's MNIST MLP run did not reach 97% validation accuracy:\n${OUT}")
endif()
if(NOT OUT MATCHES "dashboard: Test set, final model \\(10,000 examples\\): accuracy ([0-9.]+) %")
  message(FATAL_ERROR "the dashboard showed no test accuracy:\n${OUT}")
endif()
set(shown ${CMAKE_MATCH_1})
file(GLOB final ${WORK}/gui-runs/*/final.safetensors)
list(LENGTH final n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one final.safetensors under ${WORK}/gui-runs, found: ${final}")
endif()

# Both print two decimals: equal text is within 0.01 points.
run("plexus-cli eval FILE --checkpoint" ${CLI} eval examples/mnist_mlp.plexus --checkpoint ${final})
if(NOT OUT MATCHES "on 10000 mnist test examples: loss [0-9.]+, accuracy ([0-9.]+)%")
  message(FATAL_ERROR "eval printed no accuracy:\n${OUT}")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL shown)
  message(FATAL_ERROR "eval gives ${CMAKE_MATCH_1}% on the test split, the dashboard showed ${shown}%")
endif()
message("the dashboard showed ${shown}% on the test split; plexus-cli eval gives ${CMAKE_MATCH_1}%")

set(ENV{PLEXUS_PREDICT_CHECKPOINT} ${final})
set(ENV{PLEXUS_MNIST_DIR} ${SOURCE}/data/mnist)
set(ENV{PLEXUS_CLI} ${CLI})  # the suite drives plexus-cli (tests/cli_support.h)
run("predict on 20 PNGs against eval --predictions" ${PREDICT_TEST})
message("predict and eval agree on 20 test images with the GUI run's checkpoint")
