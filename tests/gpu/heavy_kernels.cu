/* Eight heavy kernels, compiled to PTX or SASS by tests/gpu/run.sh for the driver-API program. */
#include "heavy.cuh"
HEAVY_KERNEL(0)
HEAVY_KERNEL(1)
HEAVY_KERNEL(2)
HEAVY_KERNEL(3)
HEAVY_KERNEL(4)
HEAVY_KERNEL(5)
HEAVY_KERNEL(6)
HEAVY_KERNEL(7)
