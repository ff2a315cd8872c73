# Cross build for 64-bit Arm Linux (Grace Hopper, Grace Blackwell, DGX Spark,
# Jetson) on an x86-64 Debian or Ubuntu machine, with the multiarch arm64
# libraries: cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# (tests/cross/aarch64.sh installs what it needs and runs the tests under
# qemu-user).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)

# Debian's multiarch: arm64 libraries beside the host's, one include tree.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")

# Programs the build or ctest runs: the multiarch arm64 libc with its own
# ld.so (-L /); the cross toolchain's ld.so beside that libc hangs threads.
find_program(JST_QEMU_AARCH64 qemu-aarch64-static qemu-aarch64)
if(JST_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${JST_QEMU_AARCH64};-L;/")
endif()
