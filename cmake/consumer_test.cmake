# Runs as `cmake -P`: proves that a project can consume alloy. Fails loudly on any step. MODE:
#   find_package          install into a scratch prefix; tests/consumer through find_package(alloy), with alloy::cuda
#                         expected exactly when the install has it (this machine's CUDA toolkit)
#   find_package_no_cuda  the same, as on a machine without the CUDA toolkit: CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit
#                         hides it. An install made with CUDA, used where it is hidden; an install made without it,
#                         used with CUDA hidden and visible; asking for the cuda component then fails with a message
#   pkg_config            install, then compile tests/consumer/main.cpp with `pkg-config --cflags --libs alloy` only
#   deb                   `cpack -G DEB`, check the package's fields, unpack it (dpkg-deb -x, nothing is installed
#                         on the machine) and build the consumer from it with find_package and with pkg-config
#   add_subdirectory      tests/consumer with alloy as a subdirectory
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(hide_cuda -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()
# install(<name> [cmake args]): configures alloy (no tests, no examples) into WORK_DIR/<name>-build and installs it
# into WORK_DIR/<name>.
function(install_alloy name)
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/${name}-build -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
      -DALLOY_BUILD_TESTS=OFF -DALLOY_BUILD_EXAMPLES=OFF -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/${name} ${ARGN})
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/${name}-build)
endfunction()
# consumer(<dir> <prefix> [cmake args]): configures, builds and runs tests/consumer against the package in <prefix>.
function(consumer dir prefix)
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/${dir} -G ${GENERATOR}
      -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix} ${ARGN})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/${dir})
  run(${WORK_DIR}/${dir}/consumer)
  message(STATUS "consumer: ${dir} built and ran")
endfunction()
# pkg_config_consumer(<dir> <pkgconfig dir>): the consumer compiled with pkg-config's flags and nothing else.
function(pkg_config_consumer dir pcdir)
  find_program(PKG_CONFIG pkg-config REQUIRED)
  set(ENV{PKG_CONFIG_PATH} ${pcdir})
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs alloy RESULT_VARIABLE rc OUTPUT_VARIABLE flags
                  ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs alloy failed in ${pcdir}: ${err}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  file(MAKE_DIRECTORY ${WORK_DIR}/${dir})
  run(${CXX} -std=c++20 ${SOURCE_DIR}/tests/consumer/main.cpp ${flags} -o ${WORK_DIR}/${dir}/consumer)
  run(${WORK_DIR}/${dir}/consumer)
  message(STATUS "consumer: ${dir} built with pkg-config (${flags}) and ran")
endfunction()

if(MODE STREQUAL "find_package")
  install_alloy(prefix)
  file(GLOB_RECURSE core RELATIVE ${SOURCE_DIR}/include ${SOURCE_DIR}/include/alloy/*.hpp)
  file(GLOB_RECURSE blocks RELATIVE ${SOURCE_DIR}/building_blocks ${SOURCE_DIR}/building_blocks/alloy/*.hpp)
  foreach(h IN LISTS core blocks)
    if(NOT EXISTS ${WORK_DIR}/prefix/include/${h})
      message(FATAL_ERROR "install did not merge include/ and building_blocks/ into one include/alloy/: ${h} missing")
    endif()
  endforeach()
  set(cuda OFF)
  if(EXISTS ${WORK_DIR}/prefix/share/alloy/cmake/alloyCudaTargets.cmake)
    set(cuda ON)
  endif()
  consumer(consumer ${WORK_DIR}/prefix -DALLOY_EXPECT_CUDA=${cuda})
elseif(MODE STREQUAL "find_package_no_cuda")
  install_alloy(with-cuda)
  consumer(with-cuda-hidden ${WORK_DIR}/with-cuda ${hide_cuda} -DALLOY_EXPECT_CUDA=OFF)
  install_alloy(without-cuda ${hide_cuda})
  if(EXISTS ${WORK_DIR}/without-cuda/share/alloy/cmake/alloyCudaTargets.cmake)
    message(FATAL_ERROR "an alloy configured without the CUDA toolkit installed alloy::cuda")
  endif()
  consumer(without-cuda-hidden ${WORK_DIR}/without-cuda ${hide_cuda} -DALLOY_EXPECT_CUDA=OFF)
  consumer(without-cuda-visible ${WORK_DIR}/without-cuda -DALLOY_EXPECT_CUDA=OFF)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/require-cuda
                  -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK_DIR}/without-cuda
                  -DALLOY_REQUIRE_CUDA=ON RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0 OR NOT out MATCHES "installed without the CUDA toolkit")
    message(FATAL_ERROR "find_package(alloy COMPONENTS cuda) against an install without CUDA must fail and say "
                        "why (exit ${rc}):\n${out}")
  endif()
  message(STATUS "consumer: COMPONENTS cuda refused by an install without CUDA, with its reason")
elseif(MODE STREQUAL "pkg_config")
  install_alloy(prefix)
  pkg_config_consumer(pc ${WORK_DIR}/prefix/share/pkgconfig)
elseif(MODE STREQUAL "deb")
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/alloy-build -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
      -DALLOY_BUILD_TESTS=OFF -DALLOY_BUILD_EXAMPLES=OFF)
  execute_process(COMMAND ${CMAKE_CPACK_COMMAND} -G DEB WORKING_DIRECTORY ${WORK_DIR}/alloy-build
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  file(GLOB deb ${WORK_DIR}/alloy-build/liballoy-dev_*_all.deb)
  if(NOT rc EQUAL 0 OR NOT deb)
    message(FATAL_ERROR "cpack -G DEB made no liballoy-dev_*_all.deb (${rc}):\n${out}")
  endif()
  find_program(DPKG_DEB dpkg-deb REQUIRED)
  foreach(field_value "Package|liballoy-dev" "Architecture|all" "Depends|libboost-dev (>= 1.74)")
    string(REPLACE "|" ";" fv "${field_value}")
    list(GET fv 0 field)
    list(GET fv 1 want)
    execute_process(COMMAND ${DPKG_DEB} -f ${deb} ${field} OUTPUT_VARIABLE got OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT got STREQUAL want)
      message(FATAL_ERROR "${deb}: ${field} is '${got}', expected '${want}'")
    endif()
  endforeach()
  run(${DPKG_DEB} -x ${deb} ${WORK_DIR}/root)
  foreach(f include/alloy/alloy.hpp include/alloy/region.hpp share/alloy/cmake/alloyConfig.cmake
            share/pkgconfig/alloy.pc)
    if(NOT EXISTS ${WORK_DIR}/root/usr/${f})
      message(FATAL_ERROR "${deb} has no /usr/${f}")
    endif()
  endforeach()
  consumer(deb-find-package ${WORK_DIR}/root/usr)
  pkg_config_consumer(deb-pkg-config ${WORK_DIR}/root/usr/share/pkgconfig)
else()
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/consumer -G ${GENERATOR}
      -DCMAKE_CXX_COMPILER=${CXX} -DALLOY_SOURCE_DIR=${SOURCE_DIR})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
  run(${WORK_DIR}/consumer/consumer)
endif()
message(STATUS "consumer (${MODE}): passed")
