# Tests of the adapters (include/alloy/adapters/) that need more than tests/<name>.cpp: the C program that drives
# CallbackTable, the PyTorch pluggable-allocator shared libraries loaded with dlopen, and include paths for the
# TensorRT stand-in (tests/support/tensorrt_decl, used when TensorRT is absent) and for CCCL (<cuda/memory_resource>
# lives in include/cccl/ since CUDA 13, which nvcc searches and a host compiler does not).
# Included from tests/CMakeLists.txt after the doctest targets exist.
set(_alloy_adapters_src ${CMAKE_CURRENT_SOURCE_DIR}/adapters)

# --- CallbackTable: a test program written in C, linked to a C++ unit that makes the tables.
include(CheckLanguage)
check_language(C)
if(CMAKE_C_COMPILER AND ALLOY_TEST_SCOPE STREQUAL "all")
  enable_language(C)
  add_library(alloy_adapters_callback_stacks STATIC ${_alloy_adapters_src}/callback_stacks.cpp)
  target_link_libraries(alloy_adapters_callback_stacks PRIVATE alloy::alloy)
  target_compile_options(alloy_adapters_callback_stacks PRIVATE -Wall -Wextra -Wpedantic -Werror)
  add_executable(test_adapters_callback_table_c ${CMAKE_CURRENT_SOURCE_DIR}/adapters_callback_table.c)
  target_include_directories(test_adapters_callback_table_c PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(test_adapters_callback_table_c PRIVATE -std=c11 -Wall -Wextra -Wpedantic -Werror)
  target_link_libraries(test_adapters_callback_table_c PRIVATE alloy_adapters_callback_stacks Threads::Threads)
  set_target_properties(test_adapters_callback_table_c PROPERTIES LINKER_LANGUAGE CXX)
  add_test(NAME adapters_callback_table_c COMMAND test_adapters_callback_table_c)
endif()

# --- PyTorch pluggable allocator: one shared library per stack, chosen at compile time.
if(TARGET test_adapters_pytorch_allocator)
  foreach(_stack mallocator noaccess)
    add_library(alloy_torch_${_stack} MODULE ${_alloy_adapters_src}/pytorch_stack.cpp)
    string(TOUPPER ${_stack} _STACK)
    target_compile_definitions(alloy_torch_${_stack} PRIVATE ALLOY_TORCH_STACK_${_STACK})
    target_compile_options(alloy_torch_${_stack} PRIVATE -Wall -Wextra -Wpedantic -Werror)
    target_link_libraries(alloy_torch_${_stack} PRIVATE alloy::alloy)
    set_target_properties(alloy_torch_${_stack} PROPERTIES CXX_VISIBILITY_PRESET hidden PREFIX "lib")
    add_dependencies(test_adapters_pytorch_allocator alloy_torch_${_stack})
    target_compile_definitions(test_adapters_pytorch_allocator PRIVATE
      ALLOY_TORCH_LIB_${_STACK}="$<TARGET_FILE:alloy_torch_${_stack}>")
  endforeach()
  target_link_libraries(test_adapters_pytorch_allocator PRIVATE ${CMAKE_DL_LIBS})
endif()

# --- TensorRT: the header's example runs against the stand-in when the real NvInferRuntime.h is not found.
# With a real TensorRT (and the CUDA headers it includes), the tests build against it instead.
find_path(ALLOY_TENSORRT_INCLUDE_DIR NvInferRuntime.h PATH_SUFFIXES include)
if(ALLOY_TENSORRT_INCLUDE_DIR AND CUDAToolkit_FOUND)
  foreach(_t test_adapters_tensorrt_allocator test_cuda_adapters_gpu)
    if(TARGET ${_t})
      target_include_directories(${_t} SYSTEM PRIVATE ${ALLOY_TENSORRT_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
    endif()
  endforeach()
elseif(TARGET test_headers)
  target_include_directories(test_headers PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/support/tensorrt_decl)
endif()

# --- CCCL for the host-compiled CudaMrResource test and header check.
if(CUDAToolkit_FOUND)
  set(_alloy_cccl_dirs "")
  foreach(_d IN LISTS CUDAToolkit_INCLUDE_DIRS)
    list(APPEND _alloy_cccl_dirs ${_d})
    if(EXISTS ${_d}/cccl)
      list(APPEND _alloy_cccl_dirs ${_d}/cccl)
    endif()
  endforeach()
  foreach(_t test_adapters_cuda_mr_resource test_cuda_headers)
    if(TARGET ${_t})
      target_include_directories(${_t} SYSTEM PRIVATE ${_alloy_cccl_dirs})
    endif()
  endforeach()
  if(TARGET test_adapters_cuda_mr_resource)
    target_compile_definitions(test_adapters_cuda_mr_resource PRIVATE ALLOY_TEST_HAVE_CCCL=1)
  endif()
endif()
