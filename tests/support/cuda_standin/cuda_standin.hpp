#pragma once
// The CPU stand-in for the CUDA runtime: its control and inspection interface.
//
// liballoy_cuda_standin implements the CUDA runtime functions alloy and its tests call (cudaMalloc, pools, streams,
// events, copies, ...) over host memory, and is linked instead of libcudart into a second build of every test,
// example and doc example that calls the runtime from host code (the `_standin` tests). It is a checker, not a mock:
//
// - device and pool memory is mapped PROT_NONE and opened only inside the stand-in's own copies and memsets, so a
//   host touch of device memory crashes the program (pinned and managed memory are host-accessible, as on a GPU);
// - it records a violation for a double free, a free of a pointer it never gave, a free through the wrong call
//   (cudaFree of pool or pinned memory, cudaFreeHost of device memory, cudaFreeAsync of cudaMalloc memory), a copy
//   that touches freed memory or runs past an allocation, and any use of a destroyed stream, event or pool; at exit
//   it reports leaked device, pinned, managed and pool memory and every violation no test took, and then fails the
//   process (exit code 97);
// - it models streams as ordered queues with vector clocks (stream order, events, cudaStreamWaitEvent, the legacy
//   default stream's implicit synchronization, host synchronization), and reports memory that one stream freed and
//   another stream received without an event or synchronization between them: inside its own stream-ordered pools,
//   and for any stack through note_deallocate / note_allocate; it tracks the stream of each device range's last use
//   (copies, memsets) and reports a free on another stream that is not ordered after it;
// - it injects faults: no device or an insufficient driver, out of memory on the N-th allocation or above a byte
//   budget, a failing copy.
//
// A program built over the stand-in has ALLOY_CUDA_STANDIN defined (by the CMake target alloy::cuda_standin), so a
// test compiled both ways can use this interface only where it exists.
//
// Everything executes at once on the calling thread (a copy is done when cudaMemcpyAsync returns); only the ordering
// is modelled. Kernel launches are not implemented: tests that launch kernels are the nvcc tests labelled `gpu`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct CUstream_st;

namespace alloy::standin {

/// The rules the stand-in checks.
enum class rule {
  leak,                // device, pinned, managed or pool memory still allocated at exit (or at check_leaks)
  double_free,         // a pointer freed twice
  foreign_free,        // a pointer the stand-in never gave (or not the start of an allocation)
  wrong_free,          // freed through the wrong call: cudaFree of pool or pinned memory, cudaFreeHost of device
                       // memory, cudaFreeAsync of memory that is not from a pool
  destroyed_handle,    // a stream, event or pool used after it was destroyed, or a handle never created
  bad_access,          // a copy or memset that touches freed device memory or runs past an allocation
  cross_stream_reuse,  // memory freed on one stream handed to another without an event or synchronization
  unordered_free,      // memory freed on a stream (cudaFreeAsync, note_deallocate) while its last use, a copy or
                       // memset on another stream, is not ordered before the free
};
const char* rule_name(rule r) noexcept;

struct violation {
  rule what;
  std::string text;
};

/// Violations recorded since the last call, in order; taking them clears them (a test that provokes a violation
/// takes it, so the exit report stays clean).
std::vector<violation> take_violations();
/// How many violations of rule `r` are recorded and not yet taken.
std::size_t count(rule r);

/// Faults to inject, all off by default. Set them with set_faults (the environment variables in parentheses set
/// them at start-up, for whole programs such as the examples).
struct faults {
  int device_count = 1;             // (ALLOY_STANDIN_DEVICES) 0: cudaGetDeviceCount answers cudaErrorNoDevice
  int init_error = 0;               // (ALLOY_STANDIN_INIT_ERROR) e.g. 35, cudaErrorInsufficientDriver: every call
                                    // fails with it and cudaGetLastError keeps answering it, as without a driver
  std::uint64_t fail_alloc_at = 0;  // the N-th allocation call from now on fails (1 = the next); 0: never
  std::size_t byte_budget = SIZE_MAX;  // allocations that would take live bytes (all kinds) above this fail
  std::uint64_t fail_copy_at = 0;   // the N-th cudaMemcpy(Async) / cudaMemset(Async) call from now on fails
  std::size_t device_memory = std::size_t{80} << 30;  // each device's memory (cudaMemGetInfo's total)
};
void set_faults(const faults& f);
faults get_faults();

/// Live bytes of each kind (pool: bytes handed out by stand-in pools, not what they reserve).
struct usage {
  std::size_t device = 0, pinned = 0, managed = 0, pool = 0;
  std::size_t pool_reserved = 0;  // bytes the stand-in's pools hold, live and cached
};
usage live_bytes();

/// How many runtime functions were called (every entry point counts; cudaGetErrorName/String do not).
std::uint64_t call_count();
/// How many calls of one function, by name ("cudaEventRecord").
std::uint64_t call_count(const char* function);

/// Leaked allocations right now, as leak violations (taken at once and returned, not left for the exit report).
std::vector<violation> check_leaks();

/// Stream-order annotations for memory a stack manages on top of the runtime (a pool of slabs from cudaMalloc).
/// note_deallocate: the stack took back [p, p + n) from work on `s` (its memory is free once `s` reaches this
/// point). note_allocate: the stack hands [p, p + n) to work on `s`; if part of it was freed on another stream and
/// nothing orders `s` after that free (an event recorded after it and waited for by `s`, or a host synchronization),
/// a cross_stream_reuse violation is recorded. Returns false when it records one.
void note_deallocate(const void* p, std::size_t n, CUstream_st* s);
bool note_allocate(const void* p, std::size_t n, CUstream_st* s);
/// Forgets all annotations (a stack that gave its memory back to the runtime).
void forget_annotations(const void* p, std::size_t n);

}  // namespace alloy::standin
