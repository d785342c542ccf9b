# The core as a library for C++ programs, such as the one `plexus-cli export --cpp` writes:
#   cmake --install build --component plexus_dev --prefix DIR
# installs libplexus_core.so, the core's headers (DIR/include/plexus, as `#include "plexus.h"`,
# "nn/layers.h", ...) and a CMake package, DIR/lib/cmake/Plexus, for
#   find_package(Plexus REQUIRED)   # CMAKE_PREFIX_PATH=DIR
#   target_link_libraries(app PRIVATE Plexus::core)
# The package finds the core's dependencies again (OpenBLAS through pkg-config, zlib, libpng,
# libjpeg, nlohmann_json, threads; the CUDA backend is the plug-in, core/cuda/plugin.h). Not part of a
# plain install or the Debian package (scripts/package), which ship the app alone.
include(CMakePackageConfigHelpers)
set(plexus_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Plexus)
set_target_properties(plexus_core PROPERTIES EXPORT_NAME core)
target_compile_features(plexus_core PUBLIC cxx_std_20)  # its headers are C++20
install(TARGETS plexus_core EXPORT PlexusTargets  # COMPONENT belongs to each kind of file apart
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT plexus_dev EXCLUDE_FROM_ALL
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT plexus_dev EXCLUDE_FROM_ALL)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/plexus
        COMPONENT plexus_dev EXCLUDE_FROM_ALL FILES_MATCHING PATTERN "*.h")
install(EXPORT PlexusTargets NAMESPACE Plexus:: DESTINATION ${plexus_cmake_dir}
        COMPONENT plexus_dev EXCLUDE_FROM_ALL)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/PlexusConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/PlexusConfig.cmake INSTALL_DESTINATION ${plexus_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/PlexusConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/PlexusConfig.cmake ${PROJECT_BINARY_DIR}/PlexusConfigVersion.cmake
        DESTINATION ${plexus_cmake_dir} COMPONENT plexus_dev EXCLUDE_FROM_ALL)
