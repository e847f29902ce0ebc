# CMake generated Testfile for 
# Source directory: /work/main/examples
# Build directory: /work/main/build/default/examples
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[example_quickstart]=] "/work/main/build/default/examples/example_quickstart")
set_tests_properties([=[example_quickstart]=] PROPERTIES  LABELS "example" _BACKTRACE_TRIPLES "/work/main/examples/CMakeLists.txt;9;add_test;/work/main/examples/CMakeLists.txt;0;")
