// StlAllocator over real device memory (CudaMallocator): refused at compile time with the alternatives named.
// needs: cuda
// expect: StlAllocator: std containers construct their elements in the memory.*CudaMrResource
#include <alloy/adapters/stl_allocator.hpp>
#include <alloy/cuda_mallocator.hpp>

#include <vector>

int main() { std::vector<float, alloy::StlAllocator<float, alloy::CudaMallocator>> v(10); }
