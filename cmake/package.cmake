# Installing Plexus (GNUInstallDirs layout) and its Debian package, built by CPack: scripts/package
# (a build without CUDA, whose every dependency is a Debian 12 package) and scripts/package --cuda
# (plexus-cuda, which also needs NVIDIA's CUDA repository). docs/packaging.md describes both.
# The destinations are GNUInstallDirs' (included by the top CMakeLists.txt).

# plexus-cli, its man page and bash completion: app/CMakeLists.txt.

# The example projects, where MainWindow::examples() looks (<bindir>/../share/plexus/examples),
# with the one dataset that is part of an example (the housing CSV, a few KB). The others'
# datasets are not shipped: docs/packaging.md says where each comes from.
file(GLOB plexus_example_projects CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/examples/*.plexus)
install(FILES ${plexus_example_projects} DESTINATION ${CMAKE_INSTALL_DATADIR}/plexus/examples)
install(FILES ${PROJECT_SOURCE_DIR}/examples/data/housing.csv DESTINATION ${CMAKE_INSTALL_DATADIR}/plexus/examples/data)

if(PLEXUS_GUI)
  install(TARGETS plexus RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  set(plexus_linux ${PROJECT_SOURCE_DIR}/resources/linux)
  install(FILES ${plexus_linux}/plexus.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${plexus_linux}/plexus.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages)
  install(FILES ${plexus_linux}/plexus.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

  # The application icon: the SVG for any size, and PNGs at the icon theme's usual sizes rendered
  # from it at build time (render_icon, QtSvg), which desktops use for menus and docks.
  set(plexus_icon_svg ${PROJECT_SOURCE_DIR}/resources/icons/plexus.svg)
  install(FILES ${plexus_icon_svg} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
  add_executable(plexus_render_icon ${plexus_linux}/render_icon.cpp)
  target_link_libraries(plexus_render_icon PRIVATE Qt6::Svg Qt6::Gui)
  plexus_strict(plexus_render_icon)
  set(plexus_icon_pngs "")
  foreach(size 16 24 32 48 64 128 256)
    set(png ${PROJECT_BINARY_DIR}/icons/${size}x${size}/plexus.png)
    add_custom_command(OUTPUT ${png}
                       COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/icons/${size}x${size}
                       COMMAND plexus_render_icon ${plexus_icon_svg} ${size} ${png}
                       DEPENDS plexus_render_icon ${plexus_icon_svg} VERBATIM)
    install(FILES ${png} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
    list(APPEND plexus_icon_pngs ${png})
  endforeach()
  add_custom_target(plexus_icons ALL DEPENDS ${plexus_icon_pngs})
endif()

# --- The Debian package -----------------------------------------------------------------------
# With the CUDA backend the binaries load cuBLAS (and cuDNN, NCCL where the build found them)
# from the toolkit, which is not a Debian package: that package is named plexus-cuda, replaces
# plexus, and depends on NVIDIA's packages of those libraries (dpkg-shlibdeps skips libraries no
# package owns, so they are declared here).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR Plexus)
set(CPACK_PACKAGE_CONTACT "Plexus maintainers <maintainers@users.noreply.a-seed-a4a87b4b.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "design and train neural networks as node graphs")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Plexus is a desktop application for designing neural networks as a graph of
layers and training them on datasets such as MNIST, with a live training
dashboard. Its own C++ tensor and autograd library trains on the CPU (and, in
the plexus-cuda package, on NVIDIA GPUs). plexus-cli trains, evaluates and
exports the same project files without a display.")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <name>_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Libraries only a feature loads: Fashion-MNIST for examples/fashion_{lenet,resnet}.plexus and
# `plexus-cli train --dataset fashion-mnist`, mpirun for data-parallel training, native Wayland.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "dataset-fashion-mnist, openmpi-bin, qt6-wayland")
if(PLEXUS_HAVE_CUDA)
  set(CPACK_PACKAGE_NAME plexus-cuda)
  set(plexus_cuda_suffix ${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR})
  set(plexus_cuda_depends libcublas-${plexus_cuda_suffix})
  if(PLEXUS_HAVE_CUDNN)
    list(APPEND plexus_cuda_depends libcudnn9-cuda-${CUDAToolkit_VERSION_MAJOR})
  endif()
  if(PLEXUS_HAVE_NCCL)
    list(APPEND plexus_cuda_depends libnccl2)
  endif()
  list(JOIN plexus_cuda_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
  set(CPACK_DEBIAN_PACKAGE_CONFLICTS plexus)
  set(CPACK_DEBIAN_PACKAGE_REPLACES plexus)
  set(CPACK_DEBIAN_PACKAGE_PROVIDES plexus)
  message(STATUS "Plexus package: plexus-cuda, also depending on ${CPACK_DEBIAN_PACKAGE_DEPENDS}")
else()
  set(CPACK_PACKAGE_NAME plexus)
  set(CPACK_DEBIAN_PACKAGE_CONFLICTS plexus-cuda)
endif()
include(CPack)
