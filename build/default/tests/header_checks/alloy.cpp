// Generated from alloy.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/alloy.hpp>  // first: the header is self-contained
