// sampling kernels (scaffold: filled in by the sampling work).
#include "common.h"

namespace fw {

void register_sampling(py::module_& m) { (void)m; }

}  // namespace fw
