// NullAllocator as Bookkeeping means "no memory outside the block's own" (D's behaviour over a host span: no summary
// index). Over device memory the bitmap must live somewhere on the host, so that does not compile, and the message
// names the alternative.
// expect: NullAllocator holds nothing: use Mallocator
#include <alloy/bitmapped_block.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>

int main() {
  alloy::BitmappedBlock<256, 256, alloy::NoAccessAllocator, alloy::Multiblock::yes, alloy::NullAllocator> b(1 << 20);
  return b.allocate(256) ? 0 : 1;
}
