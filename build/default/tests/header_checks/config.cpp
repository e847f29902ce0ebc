// Generated from config.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/config.hpp>  // first: the header is self-contained
