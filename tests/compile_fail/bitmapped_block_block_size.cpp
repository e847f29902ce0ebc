// expect: BlockSize must be a multiple of Alignment
#include <alloy/bitmapped_block.hpp>
alloy::BitmappedBlock<24, 16> a;
