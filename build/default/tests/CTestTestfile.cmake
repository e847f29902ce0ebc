# CMake generated Testfile for 
# Source directory: /work/main/tests
# Build directory: /work/main/build/default/tests
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[mallocator]=] "/work/main/build/default/tests/test_mallocator")
set_tests_properties([=[mallocator]=] PROPERTIES  SKIP_RETURN_CODE "77" _BACKTRACE_TRIPLES "/work/main/cmake/alloy_testing.cmake;17;add_test;/work/main/tests/CMakeLists.txt;19;alloy_add_doctest;/work/main/tests/CMakeLists.txt;0;")
add_test([=[no_access_allocator]=] "/work/main/build/default/tests/test_no_access_allocator")
set_tests_properties([=[no_access_allocator]=] PROPERTIES  SKIP_RETURN_CODE "77" _BACKTRACE_TRIPLES "/work/main/cmake/alloy_testing.cmake;17;add_test;/work/main/tests/CMakeLists.txt;19;alloy_add_doctest;/work/main/tests/CMakeLists.txt;0;")
add_test([=[ternary]=] "/work/main/build/default/tests/test_ternary")
set_tests_properties([=[ternary]=] PROPERTIES  SKIP_RETURN_CODE "77" _BACKTRACE_TRIPLES "/work/main/cmake/alloy_testing.cmake;17;add_test;/work/main/tests/CMakeLists.txt;19;alloy_add_doctest;/work/main/tests/CMakeLists.txt;0;")
add_test([=[headers]=] "/work/main/build/default/tests/test_headers")
set_tests_properties([=[headers]=] PROPERTIES  _BACKTRACE_TRIPLES "/work/main/cmake/alloy_testing.cmake;99;add_test;/work/main/tests/CMakeLists.txt;27;alloy_add_header_checks;/work/main/tests/CMakeLists.txt;0;")
add_test([=[consumer_find_package]=] "/usr/bin/cmake" "-DSOURCE_DIR=/work/main" "-DWORK_DIR=/work/main/build/default/tests/consumer_fp" "-DMODE=find_package" "-DGENERATOR=Ninja" "-DCXX=/usr/bin/c++" "-P" "/work/main/cmake/consumer_test.cmake")
set_tests_properties([=[consumer_find_package]=] PROPERTIES  LABELS "package" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;51;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[consumer_add_subdirectory]=] "/usr/bin/cmake" "-DSOURCE_DIR=/work/main" "-DWORK_DIR=/work/main/build/default/tests/consumer_sd" "-DMODE=add_subdirectory" "-DGENERATOR=Ninja" "-DCXX=/usr/bin/c++" "-P" "/work/main/cmake/consumer_test.cmake")
set_tests_properties([=[consumer_add_subdirectory]=] PROPERTIES  LABELS "package" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;55;add_test;/work/main/tests/CMakeLists.txt;0;")
