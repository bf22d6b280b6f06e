// pointwise kernels of the CPU backend.
#include "common.h"

namespace fw {

void register_pointwise(py::module_& m) {}

}  // namespace fw
