# CPack: `cpack -G DEB` (run in a configured build directory) makes liballoy-dev_<version>_all.deb: the merged
# include/alloy/ headers, the CMake package (share/alloy/cmake) and share/pkgconfig/alloy.pc under /usr, depending
# on Debian's Boost headers, as libboost-dev itself is packaged. Install it with `apt install ./liballoy-dev_*.deb`.
set(CPACK_PACKAGE_NAME liballoy-dev)
set(CPACK_PACKAGE_VENDOR alloy)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION} (C++20 headers)")
set(CPACK_PACKAGE_INSTALL_DIRECTORY alloy)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_FILE_NAME liballoy-dev_${PROJECT_VERSION}_all)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libboost-dev (>= 1.74)")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nvidia-cuda-toolkit")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "alloy developers <alloy@localhost>")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "\
alloy composes memory allocators at compile time from small building blocks, after D's std.experimental.allocator, \
for host and GPU memory. This package holds the headers, the CMake package (find_package(alloy)) and a pkg-config \
file (pkg-config --cflags alloy).")
include(CPack)
