// random kernels of the CPU backend.
#include "common.h"

namespace fw {

void register_random(py::module_& m) {}

}  // namespace fw
