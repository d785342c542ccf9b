# Training on one's own pictures in the GUI: the image-folder example (examples/digits_folder.plexus)
# on 500 MNIST digits per class written as PNG files (make_image_folder), trained by clicking
# Train (plexus --train, offscreen), reaches 90% validation accuracy in its 3 epochs; and
# `plexus-cli predict` with that run's final checkpoint names the class of pictures of the folder.
# Variables: GUI, CLI, MAKE_FOLDER (executables), SOURCE (the repository), WORK (a scratch folder).
cmake_policy(VERSION 3.25)
if(NOT EXISTS ${SOURCE}/data/mnist/train-images-idx3-ubyte)
  message("MNIST not in data/mnist: skipped")
  return()
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

include(${CMAKE_CURRENT_LIST_DIR}/run_command.cmake)

run("make_image_folder" ${MAKE_FOLDER} ${WORK}/digits-png --per-class 500 --source mnist:data/mnist)
# The example with its dataset path pointing at the generated folder (a path next to the project).
file(READ ${SOURCE}/examples/digits_folder.plexus project)
string(REPLACE "\"path\": \"data/digits-png\"" "\"path\": \"digits-png\"" project "${project}")
file(WRITE ${WORK}/digits_folder.plexus "${project}")

set(ENV{QT_QPA_PLATFORM} offscreen)
set(ENV{XDG_CONFIG_HOME} ${WORK}/config)
set(ENV{PLEXUS_RECOVERY_DIR} ${WORK}/recovery)
set(ENV{PLEXUS_RUNS_DIR} ${WORK}/gui-runs)
run("the GUI's run" ${GUI} --train --until-done ${WORK}/digits_folder.plexus)
unset(ENV{PLEXUS_RUNS_DIR})
if(NOT OUT MATCHES "completed after 3 epochs, validation accuracy (9[0-9]|100)\\.")
  message(FATAL_ERROR "the GUI's image-folder run did not reach 90% validation accuracy:\n${OUT}")
endif()
message("${OUT}")
file(GLOB final ${WORK}/gui-runs/*/final.safetensors)
list(LENGTH final n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one final.safetensors under ${WORK}/gui-runs, found: ${final}")
endif()

# The first picture of each class: the model trained on them should know most of them.
set(pictures "")
foreach(digit 0 1 2 3 4 5 6 7 8 9)
  list(APPEND pictures ${WORK}/digits-png/${digit}/00000.png)
endforeach()
run("plexus-cli predict" ${CLI} predict ${WORK}/digits_folder.plexus --checkpoint ${final} ${pictures} --top 1)
set(right 0)
foreach(digit 0 1 2 3 4 5 6 7 8 9)
  if(OUT MATCHES "digits-png/${digit}/00000.png: ${digit} \\(")
    math(EXPR right "${right} + 1")
  endif()
endforeach()
if(right LESS 8)
  message(FATAL_ERROR "predict named the class of ${right} of the 10 pictures:\n${OUT}")
endif()
message("predict names the class of ${right} of 10 pictures of the folder")
