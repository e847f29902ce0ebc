#pragma once
/// \file alloy/alloy.hpp
/// Every host-side header of alloy. CUDA headers stay opt-in (`<alloy/cuda_mallocator.hpp>`); device_buffer.hpp needs none.
#include <alloy/aligned_mallocator.hpp>
#include <alloy/block.hpp>
#include <alloy/common.hpp>
#include <alloy/concepts.hpp>
#include <alloy/config.hpp>
#include <alloy/device_buffer.hpp>
#include <alloy/make.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/mmap_allocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>
#include <alloy/ref.hpp>
#include <alloy/stream_view.hpp>
#include <alloy/ternary.hpp>
// adapters (host side; cuda_mr_resource.hpp and tensorrt_allocator.hpp stay opt-in)
#include <alloy/adapters/any_allocator.hpp>
#include <alloy/adapters/callback_table.hpp>
#include <alloy/adapters/pmr_resource.hpp>
#include <alloy/adapters/pytorch_allocator.hpp>
#include <alloy/adapters/stl_allocator.hpp>
// building blocks
#include <alloy/affix_allocator.hpp>
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/bucketizer.hpp>
#include <alloy/checked.hpp>
#include <alloy/fallback_allocator.hpp>
#include <alloy/free_list.hpp>
#include <alloy/quantizer.hpp>
#include <alloy/recording_allocator.hpp>
#include <alloy/region.hpp>
#include <alloy/segregator.hpp>
#include <alloy/stats_collector.hpp>
