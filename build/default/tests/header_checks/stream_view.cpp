// Generated from stream_view.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/stream_view.hpp>  // first: the header is self-contained
