// Generated from ternary.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/ternary.hpp>  // first: the header is self-contained
