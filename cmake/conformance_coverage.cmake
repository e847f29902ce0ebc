# ctest conformance_coverage (cmake -DSOURCE_DIR=<repo> -P conformance_coverage.cmake): every public header that
# declares an allocator must have a test file that includes it and runs the conformance kit (`check_allocator`,
# tests/support/conformance.hpp) on it. A header that declares no allocator is listed below with the reason; a new
# header is held to the rule until it is listed or tested, so a block cannot land without the kit.
set(not_allocators
  "alloy=the umbrella header"
  "block=the vocabulary: Block, Multiblock, GrowDownwards, MemorySpace"
  "common=free functions over allocators (its reallocate and copy run under the kit through every block)"
  "concepts=the concepts the kit checks against"
  "config=ALLOY_ASSERT and the build switches"
  "errors=exceptions and error codes"
  "make=make/dispose of objects over any allocator"
  "stream_view=a CUDA stream handle"
  "ternary=Ternary"
  "device_buffer=a container over a stack, not an allocator"
  "stream_ordered=allocate(stream, n): the stream-ordered API, checked by tests/stream_ordered.cpp against its own model"
  "per_device=one stack per device, each checked by its own block's tests"
  "adapters/callback_table=a C function table over a stack"
  "adapters/cuda_mr_resource=a cuda::mr resource over a stack"
  "adapters/pmr_resource=a std::pmr resource over a stack"
  "adapters/pytorch_allocator=PyTorch's pluggable-allocator entry points over a stack"
  "adapters/stl_allocator=a std allocator over a stack"
  "adapters/tensorrt_allocator=a TensorRT IGpuAllocator over a stack")

file(GLOB_RECURSE headers RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/include/alloy/*.hpp ${SOURCE_DIR}/building_blocks/alloy/*.hpp)
file(GLOB tests ${SOURCE_DIR}/tests/*.cpp)
set(kit_users "")
foreach(t IN LISTS tests)
  file(READ ${t} text)
  if(text MATCHES "check_allocator[(<]")
    list(APPEND kit_users ${t})
  endif()
endforeach()

set(missing "")
set(checked 0)
foreach(h IN LISTS headers)
  string(REGEX REPLACE "^(include|building_blocks)/alloy/" "" rel "${h}")
  if(rel MATCHES "^detail/")
    continue()
  endif()
  string(REGEX REPLACE "\\.hpp$" "" name "${rel}")
  set(exempt OFF)
  foreach(e IN LISTS not_allocators)
    string(REGEX REPLACE "=.*" "" e_name "${e}")
    if(e_name STREQUAL name)
      set(exempt ON)
    endif()
  endforeach()
  if(exempt)
    continue()
  endif()
  set(found OFF)
  foreach(t IN LISTS kit_users)
    file(READ ${t} text)
    string(FIND "${text}" "#include <alloy/${rel}>" at)
    if(NOT at EQUAL -1)
      set(found ON)
      break()
    endif()
  endforeach()
  if(found)
    math(EXPR checked "${checked} + 1")
  else()
    list(APPEND missing "${rel}")
  endif()
endforeach()

# A listed header that no longer exists makes the list lie: fail on it too.
foreach(e IN LISTS not_allocators)
  string(REGEX REPLACE "=.*" "" e_name "${e}")
  if(NOT EXISTS ${SOURCE_DIR}/include/alloy/${e_name}.hpp AND NOT EXISTS ${SOURCE_DIR}/building_blocks/alloy/${e_name}.hpp)
    list(APPEND missing "(listed as not an allocator, but absent) ${e_name}")
  endif()
endforeach()

if(missing)
  string(REPLACE ";" "\n  " missing "${missing}")
  message(FATAL_ERROR "conformance_coverage: no test runs check_allocator on these headers' allocators (a test "
                      "file must include the header and call check_allocator; or list the header in "
                      "cmake/conformance_coverage.cmake with the reason it declares no allocator):\n  ${missing}")
endif()
message(STATUS "conformance_coverage: ${checked} allocator headers, each under check_allocator in a test")
