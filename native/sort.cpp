// sort kernels of the CPU backend.
#include "common.h"

namespace fw {

void register_sort(py::module_& m) {}

}  // namespace fw
