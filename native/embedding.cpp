// embedding kernels (scaffold: filled in by the embedding work).
#include "common.h"

namespace fw {

void register_embedding(py::module_& m) { (void)m; }

}  // namespace fw
