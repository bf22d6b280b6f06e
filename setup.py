"""Builds the native CPU library framework._C (C++17, pybind11, OpenBLAS for GEMM/LAPACK).

Metadata lives in pyproject.toml; this file only describes the extension. We use
setuptools with pybind11's helpers rather than CMake: one extension, no CMake layer, and
pybind11's ParallelCompile gives parallel, incremental rebuilds (a .cpp file recompiles when
it or a header in native/ changed).
"""
import glob
import os
import platform

import scipy_openblas32
from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

HEADERS = glob.glob("native/*.h")


def needs_recompile(obj, src):
    """Recompile when the object is older than its source or than any shared header."""
    if not os.path.exists(obj):
        return True
    t = os.stat(obj).st_mtime
    return any(os.stat(f).st_mtime > t for f in [src] + HEADERS)


ParallelCompile("FRAMEWORK_BUILD_JOBS", default=2, needs_recompile=needs_recompile).install()

flags = ["-O3", "-fno-math-errno", "-Wall", "-Wno-unused-function"]
# The library is always built on the machine that runs it (editable install), so tune for
# it; FRAMEWORK_ARCH="" turns this off for portable builds.
arch = os.environ.get("FRAMEWORK_ARCH", "native" if platform.machine() in ("x86_64", "AMD64") else "")
if arch:
    flags.append(f"-march={arch}")
    # GCC vectorizes with 256-bit registers even where AVX-512 is there; the branch-free
    # math of pointwise_vmath.h runs 16-27% faster 512 bits wide (exp, erf, on the 2-core
    # Xeon CI machines). Ignored without AVX-512.
    if arch == "native" and platform.machine() in ("x86_64", "AMD64"):
        flags.append("-mprefer-vector-width=512")

# FRAMEWORK_SANITIZE=1 (used by `make asan` on a copy of the tree in build/asan/) builds
# with AddressSanitizer and UndefinedBehaviorSanitizer: -O1 with debug info and frame
# pointers for readable reports. Python itself is not sanitized, so the run preloads libasan.
link_flags = ["-lpthread"]
if os.environ.get("FRAMEWORK_SANITIZE") == "1":
    san = ["-fsanitize=address,undefined", "-fno-sanitize=vptr"]
    flags = [f for f in flags if not f.startswith("-O")]
    flags += ["-O1", "-g", "-fno-omit-frame-pointer"] + san
    link_flags += san

blas_lib = scipy_openblas32.get_lib_dir()
ext = Pybind11Extension(
    "framework._C",
    sorted(glob.glob("native/*.cpp")),
    depends=HEADERS,  # so that a header-only change triggers the build at all
    include_dirs=["native", scipy_openblas32.get_include_dir()],
    library_dirs=[blas_lib],
    libraries=[scipy_openblas32.get_library()],
    runtime_library_dirs=[blas_lib],
    extra_compile_args=flags,
    extra_link_args=link_flags,
    cxx_std=17,
)

# One object folder for every build (pip's editable install and `make build`), so a
# rebuild only recompiles what changed.
HERE = os.path.dirname(os.path.abspath(__file__))
setup(ext_modules=[ext], cmdclass={"build_ext": build_ext},
      options={"build_ext": {"build_temp": os.path.join(HERE, "build", "temp")}})
