# Included by tests/ and benchmarks/device/ (whichever comes first defines it).
# The CPU stand-in for the CUDA runtime (tests/support/cuda_standin): alloy::cuda_standin is alloy::cuda with the
# stand-in linked instead of libcudart. It needs the toolkit's headers only, not nvcc or a GPU.
if(TARGET alloy::cuda AND NOT TARGET alloy::cuda_standin)
  add_library(alloy_cuda_standin_runtime STATIC ${PROJECT_SOURCE_DIR}/tests/support/cuda_standin/cuda_standin.cpp)
  target_include_directories(alloy_cuda_standin_runtime SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(alloy_cuda_standin_runtime PRIVATE -Wall -Wextra -Wpedantic -Werror)
  target_link_libraries(alloy_cuda_standin_runtime PUBLIC Threads::Threads)
  target_compile_features(alloy_cuda_standin_runtime PRIVATE cxx_std_20)
  add_library(alloy_cuda_standin INTERFACE)
  add_library(alloy::cuda_standin ALIAS alloy_cuda_standin)
  target_link_libraries(alloy_cuda_standin INTERFACE alloy::alloy alloy_cuda_standin_runtime)
  target_compile_definitions(alloy_cuda_standin INTERFACE ALLOY_CUDA_STANDIN=1)
  target_include_directories(alloy_cuda_standin INTERFACE ${PROJECT_SOURCE_DIR}/tests/support/cuda_standin)
  target_include_directories(alloy_cuda_standin SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
  foreach(_d IN LISTS CUDAToolkit_INCLUDE_DIRS)
    if(EXISTS ${_d}/cccl/cuda)
      target_include_directories(alloy_cuda_standin SYSTEM INTERFACE ${_d}/cccl)
    endif()
  endforeach()
endif()

