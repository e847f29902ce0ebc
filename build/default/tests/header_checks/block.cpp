// Generated from block.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/block.hpp>  // first: the header is self-contained
