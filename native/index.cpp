// index kernels of the CPU backend.
#include "common.h"

namespace fw {

void register_index(py::module_& m) {}

}  // namespace fw
