// dispose of an object with a destructor, over device memory: the destructor would run on the host.
// expect: T's destructor would run on the host over memory the host cannot access
#include <string>

#include <alloy/make.hpp>
#include <alloy/no_access_allocator.hpp>

int main() {
  alloy::NoAccessAllocator dev;
  std::string* p = nullptr;  // make<std::string>(dev) does not compile either
  alloy::dispose(dev, p);
}
