// device_buffer over a BitmappedBlock of NoAccessAllocator memory (PROT_NONE pages: any host touch of the payload
// crashes, so a device stack that reads or writes device memory on the host is caught): four buffers made, resized,
// reserved, shrunk, copied (through the allocator's copy), moved and destroyed; requests of 0, 1, SIZE_MAX, the
// arena +- 1. After every step: size <= capacity; a buffer with capacity has memory the block owns, overlapping no
// other buffer's; a throwing call (alloy::bad_alloc) leaves the buffer as it was; at the end the block is empty.
#include <alloy/bitmapped_block.hpp>
#include <alloy/device_buffer.hpp>
#include <alloy/no_access_allocator.hpp>

#include <memory>
#include <new>

#include "fuzz_driver.hpp"

namespace {
using Stack = alloy::BitmappedBlock<256, 256, alloy::NoAccessAllocator>;
using Buffer = alloy::device_buffer<Stack>;
constexpr std::size_t arena = 256 * 64;

std::size_t draw(alloy::fuzz::Input& in) {
  switch (in.u8() % 8) {
    case 0: return 0;
    case 1: return 1;
    case 2: return SIZE_MAX - in.u8();
    case 3: return arena - 1 + in.u8() % 3;
    default: return in.u16() % (arena / 2);
  }
}
[[noreturn]] void fail(const char* what, std::size_t op) {
  std::fprintf(stderr, "alloy fuzz: device_buffer: %s at operation %zu\n", what, op);
  std::abort();
}
}  // namespace

ALLOY_FUZZ(in) {
  Stack a(arena);
  {
    std::unique_ptr<Buffer> b[4];
    const alloy::stream_view s{};
    for (std::size_t op = 0; !in.done() && op < 1024; ++op) {
      const std::uint8_t what = in.u8();
      auto& x = b[in.u8() % 4];
      auto& y = b[in.u8() % 4];
      const std::size_t n = draw(in);
      const std::size_t size0 = x ? x->size() : 0, cap0 = x ? x->capacity() : 0;
      const void* data0 = x ? x->data() : nullptr;
      try {
        switch (what % 8) {
          case 0: x = std::make_unique<Buffer>(n, s, a); break;
          case 1: if (x) x->resize(n, s); break;
          case 2: if (x) x->reserve(n, s); break;
          case 3: if (x) x->shrink_to_fit(s); break;
          case 4: if (y) x = std::make_unique<Buffer>(*y, s, a); break;
          case 5: if (x && y && &x != &y) *x = std::move(*y); break;
          case 6: x.reset(); break;
          default: if (x && y && &x != &y) std::swap(*x, *y); break;
        }
      } catch (const std::bad_alloc&) {
        if (x && (x->size() != size0 || x->capacity() != cap0 || x->data() != data0)) fail("a failed call changed the buffer", op);
      }
      for (std::size_t i = 0; i < 4; ++i) {
        if (!b[i]) continue;
        if (b[i]->size() > b[i]->capacity()) fail("size above capacity", op);
        if (b[i]->capacity() == 0) continue;
        const alloy::Block bi{b[i]->data(), b[i]->capacity()};
        if (!bi.ptr || a.owns(bi) != alloy::Ternary::yes) fail("memory the block does not own", op);
        for (std::size_t j = 0; j < i; ++j)
          if (b[j] && b[j]->capacity() && alloy::address_of(b[j]->data()) < bi.end_address() &&
              alloy::address_of(bi.ptr) < alloy::address_of(b[j]->data()) + b[j]->capacity())
            fail("two buffers overlap", op);
      }
    }
  }
  if (a.empty() != alloy::Ternary::yes) fail("memory left allocated after every buffer was destroyed", 0);
}
