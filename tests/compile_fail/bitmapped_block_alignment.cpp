// expect: Alignment must be a power of two
#include <alloy/bitmapped_block.hpp>
alloy::BitmappedBlock<96, 48> a;
