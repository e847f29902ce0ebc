// Generated from concepts.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/concepts.hpp>  // first: the header is self-contained
