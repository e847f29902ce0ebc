#pragma once
/// \file alloy/device_buffer.hpp
/// device_buffer<A>: an untyped, uninitialized, stream-ordered buffer of memory from any alloy allocator, after RMM's
/// `rmm::device_buffer` (same members, same semantics, same spelling: the one snake_case type in alloy).
///
/// This header needs no CUDA header: it works over `Mallocator`, `NoAccessAllocator` and any stack over them on a
/// machine without CUDA. Over CUDA parents (include `<alloy/cuda_mallocator.hpp>`, link `alloy::cuda`) it copies
/// device memory with `cudaMemcpyAsync`, found through `detail::space_tag` (errors.hpp) when the buffer is
/// instantiated, so the text of this header is the same in every translation unit.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/errors.hpp>
#include <alloy/stream_view.hpp>

namespace alloy {

/// The tag of device_buffer's non-owning constructor: the buffer wraps memory it never frees.
struct external_memory_t {
  explicit constexpr external_memory_t() = default;
};
inline constexpr external_memory_t external_memory{};

namespace detail {
template <class>
inline constexpr bool always_false = false;

/// Copies n bytes into or within the memory of an allocator of type A that has no copy primitive: `std::memmove`
/// for host-accessible memory (host, host_pinned, managed: give such an allocator a copy primitive to make its copies
/// stream-ordered, as the CUDA parents have); for device memory the CUDA runtime (`cudaMemcpyAsync`), found when
/// <alloy/cuda_mallocator.hpp> is included, else a compile-time error. So a given A copies the same way in every
/// translation unit that compiles (no ODR divergence between TUs with and without CUDA).
template <class A>
bool space_default_copy(void* dst, const void* src, std::size_t n, stream_view s) {
  if constexpr (host_accessible<A>) {
    (void)s;
    if (n) std::memmove(dst, src, n);
    return true;
  } else if constexpr (requires { device_default_copy(space_tag<A>{}, dst, src, n, s); }) {
    return device_default_copy(space_tag<A>{}, dst, src, n, s);
  } else {
    static_assert(always_false<A>,
                  "alloy::device_buffer: this allocator's memory is not host-accessible and it has no copy primitive; "
                  "give it copy(dst, src, n, stream), or include <alloy/cuda_mallocator.hpp> (link alloy::cuda) so "
                  "device memory is copied with cudaMemcpyAsync");
    return false;
  }
}

/// Copies into or within A's memory: A's copy primitive when it has one, else the default of its memory space.
template <class A>
bool copy_with(A& a, void* dst, const void* src, std::size_t n, stream_view s) {
  if constexpr (has_copy<A>) return a.copy(dst, src, n, s);
  else return (void)a, space_default_copy<A>(dst, src, n, s);
}

/// Copies from Src's memory into Dst's: out of memory the host may not touch into host-accessible memory, Src's copy
/// (else its space's default), since only that side knows how to read its memory; otherwise Dst's copy, else Src's,
/// else the default of the side the host may not touch (device memory: cudaMemcpyAsync), else memmove (both sides
/// host-accessible). So a host allocator with a copy of its own (AnyAllocator over Mallocator: memmove) is never asked
/// to copy out of device memory, which it would read from the host. A side whose memory space is known only at run
/// time (AnyAllocator, device at compile time) is asked at run time (an AnyAllocator over Mallocator deep-copying
/// from a buffer over device memory must not use its own memmove).
template <class Dst, class Src>
bool copy_between(Dst& d, Src& s, void* dst, const void* src, std::size_t n, stream_view st) {
  if constexpr (host_accessible<Dst> && !host_accessible<Src>) {
    return copy_with(s, dst, src, n, st);
  } else {
    if constexpr (runtime_memory_space<Dst> || runtime_memory_space<Src>) {
      if (memory_space_at_run_time(d) != MemorySpace::device && memory_space_at_run_time(s) == MemorySpace::device)
        return copy_with(s, dst, src, n, st);
    }
    if constexpr (has_copy<Dst>) {
      return d.copy(dst, src, n, st);
    } else if constexpr (has_copy<Src>) {
      return s.copy(dst, src, n, st);
    } else if constexpr (!host_accessible<Dst>) {
      return space_default_copy<Dst>(dst, src, n, st);
    } else {
      return space_default_copy<Src>(dst, src, n, st);
    }
  }
}

/// Throws the error of a failed copy between the memories of As...: alloy::cuda_error with the runtime's code when
/// CUDA may have made the copy (one of the sides is not plain host memory and <alloy/cuda_mallocator.hpp> is
/// included; the hook throws -1 when the runtime reports no error), else with code -1. Host allocators never consult
/// the runtime, so their copies fail the same way in every translation unit. Every side counts, not only the
/// destination: a deep copy into host memory is made by the device side, whose code must not be lost.
template <class... As>
[[noreturn]] void copy_failed(const char* what) {
  auto runtime_error = [what]<class A>(std::type_identity<A>) {
    if constexpr (memory_space_of<A>() != MemorySpace::host) {
      if constexpr (requires { throw_copy_error(space_tag<A>{}, what); }) throw_copy_error(space_tag<A>{}, what);
    }
  };
  (runtime_error(std::type_identity<As>{}), ...);
  throw cuda_error(-1, what);
}

struct no_allocator_pointer {};
}  // namespace detail

/// device_buffer<A>
///
/// Semantics: RMM's `device_buffer` over an alloy allocator A: `size()` uninitialized bytes in A's memory space,
/// inside an allocation of `capacity()` bytes, and the stream used to allocate and free it. Reading `data()` before
/// writing it is undefined, as in RMM. The buffer never touches its memory from the host: every byte moves through
/// A's `copy` primitive or its memory space's default (`std::memmove` where the host may touch it, `cudaMemcpyAsync`
/// for device memory), so a
/// buffer over `NoAccessAllocator` (or a stack over it) runs on a CPU-only machine exactly as it would over
/// `CudaMallocator`.
/// The allocator: a stateless A (`std::is_empty_v<A>`: `CudaMallocator`, `Mallocator`, `NoAccessAllocator`) is not
/// stored: any object of it is as good as another, and `sizeof(device_buffer<A>) == 4 * sizeof(void*)` (data, size,
/// capacity, stream). A stateful A (a BitmappedBlock, an AllocatorList, a CudaAsyncMallocator) is held by pointer
/// and must outlive the buffer; pass it to the constructor (only stateless allocators have a default argument).
/// Stream rules: with `has_stream_ordered<A>`, memory is allocated with `allocate(stream, n)` and freed with
/// `deallocate(stream, b)` on the buffer's stream; otherwise with `allocate(n)` and `deallocate(b)`, which ignore the
/// stream. Every function that takes a stream makes it the buffer's stream (`stream()`), allocates, copies and frees
/// on it, and does not synchronize it: the caller orders other streams and the host after it. The destructor frees on
/// `stream()`.
/// Alignment: `A::alignment` by default; an explicit alignment (RMM 26) must be a power of two
/// (else `alloy::invalid_argument`); above `A::alignment` it needs `A::aligned_allocate` (else `alloy::bad_alloc`).
/// It is kept in the capacity's top bits, with the ownership flag, so capacities are limited to 2^56 - 1 bytes.
/// Non-owning mode: `device_buffer(external_memory, ptr, size, stream, a)` wraps memory the buffer never frees (the
/// `use_external` ownership of KuiperInfer's Buffer). Growing it (`reserve`, `resize` past the capacity,
/// `shrink_to_fit`) moves the bytes into memory from A, which the buffer then owns.
/// Errors: `alloy::bad_alloc` when A returns an empty Block or cannot give the alignment; `alloy::logic_error` for a
/// null source with a nonzero size, and for allocating through a default-constructed buffer of a stateful A (it has
/// no allocator); `alloy::cuda_error` when a copy fails (with the CUDA error code when CUDA made the copy). A
/// function that throws leaves the buffer as it was, except that the stream passed to it is already the buffer's
/// stream (as in RMM).
/// Differences from RMM: the allocator is a template parameter, not a type-erased resource; there is no current
/// device resource, so a stateful allocator must be given; `device_buffer(other, stream)` without an allocator uses
/// other's (RMM uses the current device resource); a buffer deep-copies from a buffer of another allocator type, and
/// the copy goes the right way between memory spaces; the non-owning mode.
/// Thread safety: none (as RMM's): one buffer is used by one thread at a time.
/// Example:
/// ```cpp
/// #include <alloy/no_access_allocator.hpp>
/// #include <alloy/mallocator.hpp>
/// static_assert(sizeof(alloy::device_buffer<alloy::NoAccessAllocator>) == 4 * sizeof(void*));
/// const char text[] = "device bytes";
/// alloy::device_buffer<alloy::NoAccessAllocator> dev(text, sizeof text, alloy::default_stream);
/// CHECK(dev.size() == sizeof text);
/// dev.resize(4096, alloy::default_stream);                  // past the capacity: reallocates, copies on the device
/// CHECK(dev.capacity() == 4096);
/// alloy::device_buffer<alloy::Mallocator> host(dev, alloy::default_stream);  // device -> host, deep copy
/// CHECK(std::strcmp(static_cast<const char*>(host.data()), "device bytes") == 0);
/// ```
template <class A>
class device_buffer {
  static_assert(allocator<A>,
                "device_buffer: A must be an alloy allocator (a type with `static constexpr std::size_t alignment` "
                "and `Block allocate(std::size_t) noexcept`, e.g. alloy::CudaMallocator, or alloy::Mallocator for "
                "host memory); an RMM or cuda::mr memory resource, a std allocator or a type whose allocate returns "
                "void* is not one");
  static constexpr bool stateless = std::is_empty_v<A>;
  static constexpr unsigned capacity_bits = 56;
  static constexpr std::size_t capacity_mask = (std::size_t{1} << capacity_bits) - 1;
  static constexpr unsigned align_shift = capacity_bits;        // 7 bits: log2(alignment) + 1, 0 = A::alignment
  static constexpr std::size_t align_field_mask = std::size_t{0x7f} << align_shift;
  static constexpr std::size_t external_bit = std::size_t{1} << 63;
  using holder = std::conditional_t<stateless, detail::no_allocator_pointer, A*>;

 public:
  using allocator_type = A;
  /// The largest capacity a buffer records.
  static constexpr std::size_t max_capacity = capacity_mask;

  /// The allocator a stateless A uses: one object per program (all objects of a stateless type are equivalent).
  static A& default_allocator() noexcept
    requires stateless
  {
    return stateless_instance<A>();
  }

  device_buffer(const device_buffer&) = delete;             // a copy needs a stream: device_buffer(other, stream)
  device_buffer& operator=(const device_buffer&) = delete;

  /// An empty buffer: no memory, size 0, the default stream. A stateful A has no allocator yet: move a buffer into it
  /// before growing it (else `alloy::logic_error`).
  device_buffer() noexcept = default;

  /// `size` uninitialized bytes from `a`, allocated on `stream` (when A is stream-ordered). Does not synchronize.
  /// Throws alloy::bad_alloc if the allocation fails.
  explicit device_buffer(std::size_t size, stream_view stream, A& a = default_allocator())
      : stream_(stream), alloc_(hold(a)) {
    allocate_into(size, 0);
    size_ = size;
  }

  /// The same with an explicit alignment (RMM 26). Throws alloy::invalid_argument if `alignment` is not a power of
  /// two, alloy::bad_alloc if A cannot give it or the allocation fails. Does not synchronize.
  explicit device_buffer(std::size_t size, std::size_t alignment, stream_view stream, A& a = default_allocator())
      : stream_(stream), alloc_(hold(a)) {
    allocate_into(size, align_field(alignment));
    size_ = size;
  }

  /// `size` bytes copied from `src` (host memory, or memory that A's copy can read: for CUDA parents any memory),
  /// allocated and copied on `stream`. Does not synchronize: `src` must stay valid until `stream` reaches the copy.
  /// Throws alloy::logic_error if `src` is null and `size != 0`, alloy::bad_alloc if the allocation fails,
  /// alloy::cuda_error if the copy fails.
  device_buffer(const void* src, std::size_t size, stream_view stream, A& a = default_allocator())
      : device_buffer(src, size, std::size_t{1}, stream, a) {}

  /// The same with an explicit alignment (RMM 26); see the alignment constructor for what it throws.
  device_buffer(const void* src, std::size_t size, std::size_t alignment, stream_view stream,
                A& a = default_allocator())
      : stream_(stream), alloc_(hold(a)) {
    if (src == nullptr && size != 0)
      throw logic_error("alloy::device_buffer: null source pointer with a nonzero size");
    const std::size_t field = align_field(alignment);
    allocate_into(size, field);
    if (size != 0 && !detail::copy_with(alloc(), data_, src, size, stream_)) {
      release();
      detail::copy_failed<A>("alloy::device_buffer: copy from the source failed");
    }
    size_ = size;
  }

  /// A deep copy of `other`'s `size()` bytes (capacity = other.size()), with other's alignment, from other's
  /// allocator, allocated and copied on `stream`. Does not synchronize: `other` must not be destroyed or written
  /// until `stream` reaches the copy. Throws alloy::bad_alloc, alloy::cuda_error.
  device_buffer(const device_buffer& other, stream_view stream) : stream_(stream), alloc_(other.alloc_) {
    copy_from(other, other.explicit_alignment());
  }

  /// A deep copy of `other` into memory from `a`. Same rules as above.
  device_buffer(const device_buffer& other, stream_view stream, A& a) : stream_(stream), alloc_(hold(a)) {
    copy_from(other, other.explicit_alignment());
  }

  /// A deep copy of a buffer of another allocator type B: the bytes move from B's memory space into A's through the
  /// right copy (A's copy primitive, else B's, else the spaces' defaults). Keeps other's explicit alignment, if any.
  /// Allocated and copied on `stream`; does not synchronize. Throws alloy::bad_alloc, alloy::cuda_error.
  template <::alloy::allocator B>
    requires(!std::is_same_v<A, B>)
  explicit device_buffer(const device_buffer<B>& other, stream_view stream, A& a = default_allocator())
      : stream_(stream), alloc_(hold(a)) {
    const std::size_t need = other.alignment() > B::alignment ? other.alignment() : std::size_t{1};
    copy_from(other, need);
  }

  /// Non-owning: wraps `size` bytes at `ptr` (memory of A's space that the caller owns and keeps alive), which the
  /// buffer never frees. A is used only if the buffer grows or is copied. Throws alloy::logic_error if `ptr` is null
  /// and `size != 0`, alloy::bad_alloc if `size` exceeds max_capacity.
  device_buffer(external_memory_t, void* ptr, std::size_t size, stream_view stream, A& a = default_allocator())
      : stream_(stream), alloc_(hold(a)) {
    if (ptr == nullptr && size != 0)
      throw logic_error("alloy::device_buffer: null external pointer with a nonzero size");
    check_capacity(size);
    if (ptr == nullptr) return;
    const std::size_t addr = address_of(ptr);
    const unsigned lg = static_cast<unsigned>(__builtin_ctzll(addr));
    const std::size_t field = (std::size_t{1} << lg) >= A::alignment ? 0 : std::size_t{lg + 1u} << align_shift;
    data_ = ptr;
    size_ = size;
    cap_ = size | field | external_bit;
  }

  /// Takes other's memory, size, capacity, alignment, stream and allocator; other becomes empty (null data, size and
  /// capacity 0, the default stream) and keeps its allocator.
  device_buffer(device_buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
        cap_(std::exchange(other.cap_, 0)), stream_(std::exchange(other.stream_, stream_view{})),
        alloc_(other.alloc_) {}

  /// Frees this buffer's memory on `stream()` (call `set_stream` first for another), then takes other's as the move
  /// constructor does, its stream and its allocator included. Does not synchronize.
  device_buffer& operator=(device_buffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      cap_ = std::exchange(other.cap_, 0);
      stream_ = std::exchange(other.stream_, stream_view{});
      alloc_ = other.alloc_;
    }
    return *this;
  }

  /// Frees the memory (unless external) on `stream()`, stream-ordered when A is. Does not synchronize.
  ~device_buffer() { release(); }

  /// Makes `stream` the buffer's stream; if `new_capacity > capacity()`, allocates `new_capacity` bytes on it, copies
  /// the `size()` bytes there on it and frees the old memory on it. Bytes past `size()` are uninitialized. Does not
  /// synchronize: the caller synchronizes the previous stream first if work on it still uses the memory.
  /// Throws alloy::bad_alloc, alloy::cuda_error (then the buffer keeps its memory).
  void reserve(std::size_t new_capacity, stream_view stream) {
    set_stream(stream);
    if (new_capacity > capacity()) reallocate_to(new_capacity);
  }

  /// Makes `stream` the buffer's stream. If `new_size <= capacity()` only `size()` changes (nothing is allocated or
  /// copied); else allocates `new_size` bytes on `stream`, copies the old `size()` bytes on it, frees the old memory
  /// on it. Bytes in [old size, new size) are uninitialized. Does not synchronize.
  /// Throws alloy::bad_alloc, alloy::cuda_error (then the buffer is unchanged).
  void resize(std::size_t new_size, stream_view stream) {
    set_stream(stream);
    if (new_size > capacity()) reallocate_to(new_size);
    size_ = new_size;
  }

  /// Makes `stream` the buffer's stream and, if `size() != capacity()`, moves the bytes into a new allocation of
  /// exactly `size()` bytes on `stream` (none when the size is 0) and frees the old one on it. Does not synchronize.
  /// Throws alloy::bad_alloc, alloy::cuda_error (then the buffer is unchanged).
  void shrink_to_fit(stream_view stream) {
    set_stream(stream);
    if (size_ == capacity()) return;
    if (size_ == 0) {
      const bool external = is_external();
      release();
      data_ = nullptr;
      // Owned memory keeps its alignment (A's or the explicit one); an external pointer's was only a fact about that
      // pointer: A's from now on, as when shrink_to_fit moves a nonempty external buffer (keeping the pointer's
      // under-alignment, the empty buffer could not grow again over an allocator without aligned_allocate).
      cap_ = external ? 0 : (cap_ & align_field_mask);
      return;
    }
    reallocate_to(size_);
  }

  [[nodiscard]] const void* data() const noexcept { return data_; }
  [[nodiscard]] void* data() noexcept { return data_; }
  /// The number of bytes.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The number of bytes, signed (as RMM).
  [[nodiscard]] std::int64_t ssize() const noexcept {
    ALLOY_ASSERT(size_ <= static_cast<std::size_t>(INT64_MAX), "device_buffer::ssize: size overflows int64_t");
    return static_cast<std::int64_t>(size_);
  }
  /// Whether size() is 0 (the buffer may still hold memory: capacity() > 0).
  [[nodiscard]] bool is_empty() const noexcept { return size_ == 0; }
  /// The bytes allocated; size() <= capacity().
  [[nodiscard]] std::size_t capacity() const noexcept { return cap_ & capacity_mask; }
  /// The alignment of data(): A::alignment, or the explicit one. For external memory, the smaller of A::alignment
  /// and what its address guarantees.
  [[nodiscard]] std::size_t alignment() const noexcept {
    const std::size_t f = (cap_ & align_field_mask) >> align_shift;
    return f == 0 ? A::alignment : std::size_t{1} << (f - 1);
  }
  /// Whether the memory is external (the non-owning mode): the buffer will not free it.
  [[nodiscard]] bool is_external() const noexcept { return (cap_ & external_bit) != 0; }
  /// The stream most recently given to a constructor, reserve, resize, shrink_to_fit or set_stream.
  [[nodiscard]] stream_view stream() const noexcept { return stream_; }
  /// Makes `stream` the stream the memory is freed on (by the destructor, a move assignment, or the next
  /// reallocation). Does not synchronize.
  void set_stream(stream_view stream) noexcept { stream_ = stream; }
  /// The allocator (shallow: the referenced allocator, not a copy). For a stateful A, precondition: the buffer was
  /// given one.
  [[nodiscard]] A& allocator() const noexcept {
    if constexpr (stateless) {
      return default_allocator();
    } else {
      ALLOY_ASSERT(alloc_ != nullptr, "device_buffer::allocator: this buffer has no allocator");
      return *alloc_;
    }
  }

 private:
  template <class>
  friend class device_buffer;

  static holder hold(A& a) noexcept {
    if constexpr (stateless) {
      (void)a;
      return {};
    } else {
      return &a;
    }
  }
  A& alloc() const {
    if constexpr (!stateless) {
      if (alloc_ == nullptr)
        throw logic_error("alloy::device_buffer: a default-constructed buffer of a stateful allocator has no "
                          "allocator; construct it with one");
    }
    return allocator();
  }
  // The explicit alignment the buffer asks of A (1 when A's own is enough).
  std::size_t explicit_alignment() const noexcept {
    return (cap_ & align_field_mask) != 0 ? alignment() : std::size_t{1};
  }
  static std::size_t align_field(std::size_t alignment) {
    if (!is_power_of_two(alignment))
      throw invalid_argument("alloy::device_buffer: alignment " + std::to_string(alignment) +
                             " is not a power of two");
    if (alignment <= A::alignment) return 0;
    return std::size_t{log2_exact(alignment) + 1u} << align_shift;
  }
  static void check_capacity(std::size_t n) {
    if (n > max_capacity)
      throw bad_alloc("alloy::device_buffer: " + std::to_string(n) + " bytes exceed max_capacity");
  }
  // A new block of n bytes with the alignment encoded in `field`, on stream_; throws on failure.
  Block get_block(std::size_t n, std::size_t field) const {
    check_capacity(n);
    if (n == 0) return {};
    A& a = alloc();
    Block b;
    if (field != 0) {
      const std::size_t al = std::size_t{1} << ((field >> align_shift) - 1);
      if constexpr (has_aligned_allocate<A>) {
        b = a.aligned_allocate(n, al);
      } else {
        throw bad_alloc("alloy::device_buffer: the allocator cannot align to " + std::to_string(al) +
                        " bytes (it has no aligned_allocate and its alignment is " + std::to_string(A::alignment) +
                        ")");
      }
    } else if constexpr (has_stream_ordered<A>) {
      b = a.allocate(stream_, n);
    } else {
      b = a.allocate(n);
    }
    if (!b) throw bad_alloc("alloy::device_buffer: allocating " + std::to_string(n) + " bytes failed");
    return b;
  }
  void put_block(Block b) const noexcept {
    if (!b) return;
    A& a = allocator();
    if constexpr (has_stream_ordered<A>) (void)a.deallocate(stream_, b);
    else (void)alloy::deallocate(a, b);
  }
  // Constructors: allocate n bytes into this (empty) buffer.
  void allocate_into(std::size_t n, std::size_t field) {
    const Block b = get_block(n, field);
    data_ = b.ptr;
    cap_ = n | field;
  }
  // Frees the memory unless it is external; leaves the fields as they are.
  void release() noexcept {
    if (data_ != nullptr && !is_external()) put_block({data_, capacity()});
  }
  // Moves the bytes into a new owned allocation of n >= size_ bytes (n > 0), on stream_. Strong guarantee.
  void reallocate_to(std::size_t n) {
    const std::size_t field = cap_ & align_field_mask;
    const std::size_t keep_field = is_external() ? std::size_t{0} : field;  // owned memory: A's or the explicit one
    const Block nb = get_block(n, keep_field);
    if (size_ != 0 && !detail::copy_with(alloc(), nb.ptr, data_, size_, stream_)) {
      put_block(nb);
      detail::copy_failed<A>("alloy::device_buffer: copy into the new allocation failed");
    }
    release();
    data_ = nb.ptr;
    cap_ = n | keep_field;
  }
  // Constructors: allocate other.size() bytes with at least `need` alignment and copy other's bytes in.
  template <class B>
  void copy_from(const device_buffer<B>& other, std::size_t need) {
    const std::size_t n = other.size();
    allocate_into(n, need > A::alignment ? align_field(need) : 0);
    if (n != 0 && !detail::copy_between(alloc(), other.alloc(), data_, other.data(), n, stream_)) {
      release();
      detail::copy_failed<A, B>("alloy::device_buffer: deep copy failed");
    }
    size_ = n;
  }

  void* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t cap_ = 0;  // capacity | (log2(explicit alignment) + 1) << 56 | external << 63
  stream_view stream_{};
  [[no_unique_address]] holder alloc_{};
};

}  // namespace alloy
