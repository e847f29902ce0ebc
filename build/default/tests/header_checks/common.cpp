// Generated from common.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/common.hpp>  // first: the header is self-contained
