// benchmarks/stacks.hpp in the test suite: the header compiles with the tests' warnings as errors (the benchmarks are
// not built by the test command), and the example in its "To add a stack" comment compiles and runs as written.
#include <doctest/doctest.h>

#include "stacks.hpp"

#include <alloy/free_list.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace example {  // beside stacks.hpp's own AlloyW12, over its BitmappedSingle and BitmappedMulti
using namespace alloy_bench;
using boost::mp11::mp_list;
// The example, as stacks.hpp's comment has it (the test below checks that the comment still says this).
using AlloyW12 = mp_list<BitmappedSingle, BitmappedMulti,
                         Stack<alloy::FreeList<alloy::Mallocator, 64>, "FreeList<Mallocator,64>", "alloy FL 64">>;
}  // namespace example

TEST_CASE("the example descriptor of stacks.hpp makes a working allocator") {
  using D = boost::mp11::mp_at_c<example::AlloyW12, 2>;
  CHECK(std::string_view(D::name) == "FreeList<Mallocator,64>");
  CHECK(std::string_view(D::label) == "alloy FL 64");
  CHECK_FALSE(D::anchor);
  auto a = D::make(1 << 20);
  const alloy::Block b = a.allocate(64);
  REQUIRE(b);
  CHECK(b.size == 64);
  CHECK(a.deallocate(b));
  const alloy::Block again = a.allocate(64);
  CHECK(again.ptr == b.ptr);  // the free list hands the block back
  CHECK(a.deallocate(again));
}

TEST_CASE("stacks.hpp's comment still shows the example compiled here") {
  std::ifstream in(std::string(ALLOY_SOURCE_DIR) + "/benchmarks/stacks.hpp");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  CHECK(text.find("/// using AlloyW12 = mp_list<BitmappedSingle, BitmappedMulti,\n"
                  "///                          Stack<alloy::FreeList<alloy::Mallocator, 64>, "
                  "\"FreeList<Mallocator,64>\", \"alloy FL 64\">>;\n") != std::string::npos);
}
