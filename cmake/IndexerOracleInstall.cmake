# `cmake --install` and the CMake package (included last by the top-level CMakeLists.txt).
#
#   <prefix>/include/ixo/*.hpp                        oracle, verdict, case files, generators, properties, fixtures, suite
#   <prefix>/include/indexer-oracle/kernels/...       backend.hpp, common/, cpu/, external/ (gpu/ with CUDA): the
#                                                     spellings the project uses ("backend.hpp", "external/exec_backend.hpp")
#   <prefix>/lib/libixo_*.a, <prefix>/bin/ixo
#   <prefix>/share/indexer-oracle/fixtures/           canonical/ + regressions/, found at run time (ixo::fixtures_root())
#   <prefix>/lib/python3.X/site-packages/indexer_oracle   (python/CMakeLists.txt)
#   <prefix>/lib/cmake/IndexerOracle/                 IndexerOracleConfig.cmake, ...ConfigVersion.cmake, ...Targets.cmake
#
# find_package(IndexerOracle CONFIG REQUIRED) gives IndexerOracle::reference, ::backends, ::suite,
# ::conformance (when built) and ::ixo; the same names exist as ALIAS targets in this build.
# Everything is relative to the prefix: tests/install stages an install and builds
# examples/cpp-consumer against it (ctest -L install).
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(IXO_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/IndexerOracle)
set(IXO_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/indexer-oracle)
# Literal "include/..." as in the targets' $<INSTALL_INTERFACE:...> include directories.
set(IXO_INSTALL_KERNELS_INCLUDEDIR include/indexer-oracle/kernels)

# Public name -> target. Static libraries carry their private dependencies as link-only
# entries, so every library in the link closure is exported (the helpers under their own names).
set(ixo_public reference ixo_reference backends ixo_backends suite ixo_suite)
# The reference layer's parts (reference = all three; kernels link case only).
set(ixo_reference_parts case ixo_case oracle ixo_oracle generators ixo_generators)
set(ixo_helpers kernels_common ixo_kernels_common cpu_twin ixo_cpu_twin properties ixo_properties
                fixtures ixo_fixtures warnings ixo_warnings)
if(TARGET ixo_conformance)  # GoogleTest registration of the whole suite for an outside kernel
  list(APPEND ixo_public conformance ixo_conformance)
endif()
foreach(gpu_target gpu ixo_gpu gpu_cp ixo_gpu_cp)
  if(TARGET ixo_${gpu_target})
    list(APPEND ixo_helpers ${gpu_target} ixo_${gpu_target})
  endif()
endforeach()
set(ixo_exported)
set(ixo_all ${ixo_public} ${ixo_reference_parts} ${ixo_helpers})
while(ixo_all)
  list(POP_FRONT ixo_all name target)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  add_library(IndexerOracle::${name} ALIAS ${target})
  list(APPEND ixo_exported ${target})
  # The public headers need C++20 (std::span, concepts, <numbers>): the targets carry it, so
  # a consumer that links them needs no CMAKE_CXX_STANDARD of its own (ctest -L install
  # builds examples/cpp-consumer and tests/install/package-check without one). CXX only:
  # cxx_std_* does not set the CUDA standard of the GPU libraries' .cu files.
  if(NOT target STREQUAL "ixo_warnings")  # compile options only, no headers
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY")
      target_compile_features(${target} INTERFACE cxx_std_20)
    else()
      target_compile_features(${target} PUBLIC cxx_std_20)
    endif()
  endif()
  # A target added with a plain source-tree include directory (e.g. PUBLIC include) cannot
  # be exported: keep it for the build, and point installs at <prefix>/include.
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  if(dirs)
    set(fixed)
    foreach(d IN LISTS dirs)
      string(FIND "${d}" "${PROJECT_SOURCE_DIR}/" at)
      if(at EQUAL 0)
        list(APPEND fixed "$<BUILD_INTERFACE:${d}>" "$<INSTALL_INTERFACE:include>")
      else()
        list(APPEND fixed "${d}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES fixed)
    set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${fixed}")
  endif()
endwhile()
add_executable(IndexerOracle::ixo ALIAS ixo)

# Programs built against an install find its fixtures wherever the prefix was moved: each
# target that links IndexerOracle::fixtures compiles this one-line registration, which the
# exported file points at ${_IMPORT_PREFIX} (resolved when the consumer is configured).
target_sources(ixo_fixtures INTERFACE
  $<INSTALL_INTERFACE:$<INSTALL_PREFIX>/${IXO_INSTALL_DATADIR}/installed_fixtures_root.cpp>)
target_compile_definitions(ixo_fixtures INTERFACE
  $<INSTALL_INTERFACE:IXO_INSTALLED_FIXTURES_DIR="$<INSTALL_PREFIX>/${IXO_INSTALL_DATADIR}/fixtures">)

# The installed ixo and Python module find the fixtures from their own location.
file(RELATIVE_PATH ixo_from_bin /p/${CMAKE_INSTALL_BINDIR} /p/${IXO_INSTALL_DATADIR}/fixtures)
set(ixo_from_python "")
if(TARGET _core)
  file(RELATIVE_PATH ixo_from_python /p/${IXO_PYTHON_INSTALL_DIR}/indexer_oracle /p/${IXO_INSTALL_DATADIR}/fixtures)
endif()
target_compile_definitions(ixo_fixtures PRIVATE IXO_FIXTURES_FROM_BIN="${ixo_from_bin}" IXO_FIXTURES_FROM_PYTHON="${ixo_from_python}")

install(TARGETS ${ixo_exported} ixo EXPORT IndexerOracleTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT IndexerOracleTargets NAMESPACE IndexerOracle:: DESTINATION ${IXO_INSTALL_CMAKEDIR})

# Headers, with the include spellings the project uses.
foreach(dir reference properties fixtures suite)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/include/ixo DESTINATION include FILES_MATCHING PATTERN "*.hpp")
endforeach()
set(ixo_no_gpu)
if(NOT IXO_HAVE_CUDA)
  set(ixo_no_gpu PATTERN gpu EXCLUDE)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/ DESTINATION ${IXO_INSTALL_KERNELS_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh" PATTERN "*.inl" PATTERN nccl EXCLUDE ${ixo_no_gpu})

# Data read at run time, and the registration source above.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/fixtures/canonical ${PROJECT_SOURCE_DIR}/fixtures/regressions
        DESTINATION ${IXO_INSTALL_DATADIR}/fixtures)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/installed_fixtures_root.cpp DESTINATION ${IXO_INSTALL_DATADIR})

# Package files: versioned (same minor version while 0.x: no API promise across minors yet).
set(IXO_EXPORT_CONFORMANCE OFF)
if(TARGET ixo_conformance)
  set(IXO_EXPORT_CONFORMANCE ON)
endif()
set(IXO_INSTALL_PYTHONDIR "")
if(TARGET _core)
  set(IXO_INSTALL_PYTHONDIR ${IXO_PYTHON_INSTALL_DIR})
endif()
set(IXO_EXPORT_CUDA OFF)
if(IXO_HAVE_CUDA)
  set(IXO_EXPORT_CUDA ON)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/IndexerOracleConfig.cmake.in
  ${PROJECT_BINARY_DIR}/IndexerOracleConfig.cmake INSTALL_DESTINATION ${IXO_INSTALL_CMAKEDIR}
  PATH_VARS IXO_INSTALL_DATADIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/IndexerOracleConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/IndexerOracleConfig.cmake ${PROJECT_BINARY_DIR}/IndexerOracleConfigVersion.cmake
        DESTINATION ${IXO_INSTALL_CMAKEDIR})
