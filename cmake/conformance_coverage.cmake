# ctest conformance_coverage (cmake -DSOURCE_DIR=<repo> -P conformance_coverage.cmake): every public header that
# declares an allocator must have a test file that includes it and runs the conformance kit (`check_allocator`,
# tests/support/conformance.hpp) on it. A header that declares no allocator is listed below with the reason; a new
# header is held to the rule until it is listed or tested, so a block cannot land without the kit.
# And every Shared block (a class or alias template named Shared... in a public header) must run the thread-safety
# suite (`check_thread_safe`, tests/support/thread_safety.hpp): see the second half.
cmake_policy(SET CMP0057 NEW)  # if(... IN_LIST ...) in this -P script
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
  "per_device=one stack per device, each checked by its own block's tests"
  "adapters/callback_table=a C function table over a stack"
  "adapters/cuda_mr_resource=a cuda::mr resource over a stack"
  "adapters/pmr_resource=a std::pmr resource over a stack"
  "adapters/pytorch_allocator=PyTorch's pluggable-allocator entry points over a stack"
  "adapters/stl_allocator=a std allocator over a stack"
  "adapters/tensorrt_allocator=a TensorRT IGpuAllocator over a stack")

# The names of a list of "name=reason" entries.
function(listed_names entries out)
  set(names "")
  foreach(e IN LISTS entries)
    string(REGEX REPLACE "=.*" "" e_name "${e}")
    list(APPEND names ${e_name})
  endforeach()
  set(${out} ${names} PARENT_SCOPE)
endfunction()
listed_names("${not_allocators}" not_allocator_names)

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
  if(name IN_LIST not_allocator_names)
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
foreach(e_name IN LISTS not_allocator_names)
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

# Every Shared block runs check_thread_safe. A test file that calls it names its blocks in make lambdas,
# `[] { return T(...); }`, passed to check_thread_safe or to a function of the same file that calls it
# (thread_safety.cpp's both_counts and stress); T is the Shared template itself (`alloy::SharedRegion<...>`) or an
# alias of one in that file (`using SR = alloy::SharedRegion<Mallocator>;`). A Shared block that cannot run the suite
# would be listed here with the reason; none is.
set(not_thread_checked "")
listed_names("${not_thread_checked}" not_thread_checked_names)
set(shared_names "")
foreach(h IN LISTS headers)
  if(h MATCHES "/detail/")
    continue()
  endif()
  file(READ ${SOURCE_DIR}/${h} text)
  string(REGEX MATCHALL "(class|struct|using)[ \n]+Shared[A-Z][A-Za-z0-9]*" decls "${text}")
  foreach(d IN LISTS decls)
    string(REGEX REPLACE ".*[ \n]" "" d "${d}")
    list(APPEND shared_names ${d})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES shared_names)

set(thread_checked "")
foreach(t IN LISTS tests)
  file(READ ${t} text)
  if(NOT text MATCHES "check_thread_safe\\(")
    continue()
  endif()
  # Aliases of Shared templates: name -> template.
  string(REGEX MATCHALL "using[ ]+[A-Za-z_][A-Za-z0-9_]*[ ]*=[ ]*(alloy::)?Shared[A-Z][A-Za-z0-9]*" aliases "${text}")
  # Make lambdas and the function they are passed to.
  string(REGEX MATCHALL "[A-Za-z_][A-Za-z0-9_]*\\([ \n]*\\[[^]]*\\][ \n]*{[ \n]*return[ \n]+[A-Za-z_:][A-Za-z0-9_:]*" calls
         "${text}")
  foreach(c IN LISTS calls)
    string(REGEX REPLACE "^([A-Za-z0-9_]+)\\(.*" "\\1" callee "${c}")
    string(REGEX REPLACE ".*return[ \n]+" "" made "${c}")
    string(REGEX REPLACE "^alloy::" "" made "${made}")
    if(NOT callee STREQUAL "check_thread_safe")
      # A function of this file whose body calls check_thread_safe.
      string(REGEX MATCH "void ${callee}\\([^{]*{([^}]|}[^\n])*check_thread_safe\\(" helper "${text}")
      if(NOT helper)
        continue()
      endif()
    endif()
    if(NOT made MATCHES "^Shared")
      foreach(a IN LISTS aliases)
        string(REGEX REPLACE "^using[ ]+([A-Za-z0-9_]+).*" "\\1" a_name "${a}")
        if(a_name STREQUAL made)
          string(REGEX REPLACE ".*(Shared[A-Za-z0-9]*)$" "\\1" made "${a}")
        endif()
      endforeach()
    endif()
    if(made MATCHES "^Shared")
      list(APPEND thread_checked ${made})
    endif()
  endforeach()
endforeach()

set(missing "")
foreach(s IN LISTS shared_names)
  if(NOT s IN_LIST thread_checked AND NOT s IN_LIST not_thread_checked_names)
    list(APPEND missing ${s})
  endif()
endforeach()
foreach(e_name IN LISTS not_thread_checked_names)
  if(NOT e_name IN_LIST shared_names)
    list(APPEND missing "(listed as not thread-checked, but declared nowhere) ${e_name}")
  endif()
endforeach()
if(missing)
  string(REPLACE ";" "\n  " missing "${missing}")
  message(FATAL_ERROR "conformance_coverage: these Shared blocks run the thread-safety suite nowhere (a test must call "
                      "check_thread_safe with a make lambda `[] { return T(...); }`, T the block or an alias of it; "
                      "or list the block in cmake/conformance_coverage.cmake with the reason it cannot):\n  ${missing}")
endif()
list(LENGTH shared_names n_shared)
message(STATUS "conformance_coverage: ${n_shared} Shared blocks, each under check_thread_safe in a test")
