// LAPACK factorizations the framework's linalg uses that NumPy does not expose: LU with
// partial pivoting (getrf / getrs) and Bunch-Kaufman LDL^T (sytrf / sytrs), from the
// OpenBLAS build the extension already links (scipy_openblas32).
//
// Each function takes C-contiguous NumPy arrays holding a batch of matrices in column-major
// order (the Python side passes the transposes), works in place, and writes LAPACK's info
// per matrix. The _work entry points skip LAPACKE's NaN scan, so a NaN input is factored
// as LAPACK itself would factor it (PyTorch calls LAPACK directly too).
#include <lapacke.h>
#include <pybind11/numpy.h>

#include "common.h"

namespace fw {
namespace {

template <typename T>
using Arr = py::array_t<T, py::array::c_style>;
using IArr = py::array_t<lapack_int, py::array::c_style>;

template <typename T>
T* data_of(Arr<T>& a, const char* what) {
  if (!a.writeable()) throw std::invalid_argument(std::string(what) + " must be writable");
  return a.mutable_data();
}

template <typename T>
lapack_int getrf1(lapack_int m, lapack_int n, T* a, lapack_int* ipiv);
template <>
lapack_int getrf1<float>(lapack_int m, lapack_int n, float* a, lapack_int* ipiv) {
  return scipy_LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, a, std::max(m, 1), ipiv);
}
template <>
lapack_int getrf1<double>(lapack_int m, lapack_int n, double* a, lapack_int* ipiv) {
  return scipy_LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, a, std::max(m, 1), ipiv);
}

template <typename T>
lapack_int getrs1(char trans, lapack_int n, lapack_int k, const T* a, const lapack_int* ipiv,
                  T* b);
template <>
lapack_int getrs1<float>(char trans, lapack_int n, lapack_int k, const float* a,
                         const lapack_int* ipiv, float* b) {
  return scipy_LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, trans, n, k, a, std::max(n, 1), ipiv, b,
                                   std::max(n, 1));
}
template <>
lapack_int getrs1<double>(char trans, lapack_int n, lapack_int k, const double* a,
                          const lapack_int* ipiv, double* b) {
  return scipy_LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, trans, n, k, a, std::max(n, 1), ipiv, b,
                                   std::max(n, 1));
}

template <typename T>
lapack_int sytrf1(lapack_int n, T* a, lapack_int* ipiv, T* work, lapack_int lwork);
template <>
lapack_int sytrf1<float>(lapack_int n, float* a, lapack_int* ipiv, float* work,
                         lapack_int lwork) {
  return scipy_LAPACKE_ssytrf_work(LAPACK_COL_MAJOR, 'L', n, a, std::max(n, 1), ipiv, work,
                                   lwork);
}
template <>
lapack_int sytrf1<double>(lapack_int n, double* a, lapack_int* ipiv, double* work,
                          lapack_int lwork) {
  return scipy_LAPACKE_dsytrf_work(LAPACK_COL_MAJOR, 'L', n, a, std::max(n, 1), ipiv, work,
                                   lwork);
}

template <typename T>
lapack_int sytrs1(lapack_int n, lapack_int k, const T* a, const lapack_int* ipiv, T* b);
template <>
lapack_int sytrs1<float>(lapack_int n, lapack_int k, const float* a, const lapack_int* ipiv,
                         float* b) {
  return scipy_LAPACKE_ssytrs_work(LAPACK_COL_MAJOR, 'L', n, k, a, std::max(n, 1), ipiv, b,
                                   std::max(n, 1));
}
template <>
lapack_int sytrs1<double>(lapack_int n, lapack_int k, const double* a, const lapack_int* ipiv,
                          double* b) {
  return scipy_LAPACKE_dsytrs_work(LAPACK_COL_MAJOR, 'L', n, k, a, std::max(n, 1), ipiv, b,
                                   std::max(n, 1));
}

void check_batch(const py::array& a, const py::array& piv, const py::array& info, int64_t k) {
  if (a.ndim() != 3 || piv.ndim() != 2 || info.ndim() != 1 || piv.shape(0) != a.shape(0) ||
      info.shape(0) != a.shape(0) || piv.shape(1) != k)
    throw std::invalid_argument("lapack: expected a (batch, cols, rows) array, (batch, k) "
                                "pivots and (batch,) info");
}

// a: (batch, n, m), each an m x n column-major matrix; ipiv: (batch, min(m, n)); info: (batch,)
template <typename T>
void getrf(Arr<T> a, IArr ipiv, IArr info) {
  const lapack_int n = (lapack_int)a.shape(1), m = (lapack_int)a.shape(2);
  check_batch(a, ipiv, info, std::min(m, n));
  T* p = data_of(a, "a");
  lapack_int* pv = ipiv.mutable_data();
  lapack_int* inf = info.mutable_data();
  const int64_t nb = a.shape(0), k = std::min(m, n);
  py::gil_scoped_release release;
  for (int64_t b = 0; b < nb; ++b)
    inf[b] = m && n ? getrf1<T>(m, n, p + b * (int64_t)m * n, pv + b * k) : 0;
}

// lu: (batch, n, n) from getrf; b: (batch, k, n), each an n x k column-major right side
template <typename T>
void getrs(Arr<T> lu, IArr ipiv, Arr<T> b, bool trans) {
  const lapack_int n = (lapack_int)lu.shape(1), k = (lapack_int)b.shape(1);
  if (b.ndim() != 3 || b.shape(0) != lu.shape(0) || b.shape(2) != n || ipiv.shape(1) != n)
    throw std::invalid_argument("lapack.getrs: shapes do not match");
  const T* p = lu.data();
  const lapack_int* pv = ipiv.data();
  T* pb = data_of(b, "b");
  const int64_t nb = lu.shape(0);
  py::gil_scoped_release release;
  for (int64_t i = 0; i < nb && n && k; ++i)
    getrs1<T>(trans ? 'T' : 'N', n, k, p + i * (int64_t)n * n, pv + i * (int64_t)n,
              pb + i * (int64_t)n * k);
}

// a: (batch, n, n) column-major, factored in place from its lower triangle
template <typename T>
void sytrf(Arr<T> a, IArr ipiv, IArr info) {
  const lapack_int n = (lapack_int)a.shape(1);
  check_batch(a, ipiv, info, n);
  T* p = data_of(a, "a");
  lapack_int* pv = ipiv.mutable_data();
  lapack_int* inf = info.mutable_data();
  const int64_t nb = a.shape(0);
  if (!n) {
    for (int64_t b = 0; b < nb; ++b) inf[b] = 0;
    return;
  }
  T query = 0;
  sytrf1<T>(n, p, pv, &query, -1);
  std::vector<T> work(std::max<int64_t>(1, (int64_t)query));
  py::gil_scoped_release release;
  for (int64_t b = 0; b < nb; ++b)
    inf[b] = sytrf1<T>(n, p + b * (int64_t)n * n, pv + b * (int64_t)n, work.data(),
                       (lapack_int)work.size());
}

template <typename T>
void sytrs(Arr<T> ld, IArr ipiv, Arr<T> b) {
  const lapack_int n = (lapack_int)ld.shape(1), k = (lapack_int)b.shape(1);
  if (b.ndim() != 3 || b.shape(0) != ld.shape(0) || b.shape(2) != n || ipiv.shape(1) != n)
    throw std::invalid_argument("lapack.sytrs: shapes do not match");
  const T* p = ld.data();
  const lapack_int* pv = ipiv.data();
  T* pb = data_of(b, "b");
  const int64_t nb = ld.shape(0);
  py::gil_scoped_release release;
  for (int64_t i = 0; i < nb && n && k; ++i)
    sytrs1<T>(n, k, p + i * (int64_t)n * n, pv + i * (int64_t)n, pb + i * (int64_t)n * k);
}

}  // namespace

void register_lapack(py::module_& m) {
  auto l = m.def_submodule("lapack", "LAPACK getrf/getrs/sytrf/sytrs on batches of "
                                     "column-major matrices (NumPy arrays, in place)");
  // float64 first: pybind11 tries overloads in order and must not convert a double array
  l.def("getrf", &getrf<double>, py::arg("a").noconvert(), py::arg("ipiv").noconvert(),
        py::arg("info").noconvert());
  l.def("getrf", &getrf<float>, py::arg("a").noconvert(), py::arg("ipiv").noconvert(),
        py::arg("info").noconvert());
  l.def("getrs", &getrs<double>, py::arg("lu").noconvert(), py::arg("ipiv").noconvert(),
        py::arg("b").noconvert(), py::arg("trans"));
  l.def("getrs", &getrs<float>, py::arg("lu").noconvert(), py::arg("ipiv").noconvert(),
        py::arg("b").noconvert(), py::arg("trans"));
  l.def("sytrf", &sytrf<double>, py::arg("a").noconvert(), py::arg("ipiv").noconvert(),
        py::arg("info").noconvert());
  l.def("sytrf", &sytrf<float>, py::arg("a").noconvert(), py::arg("ipiv").noconvert(),
        py::arg("info").noconvert());
  l.def("sytrs", &sytrs<double>, py::arg("ld").noconvert(), py::arg("ipiv").noconvert(),
        py::arg("b").noconvert());
  l.def("sytrs", &sytrs<float>, py::arg("ld").noconvert(), py::arg("ipiv").noconvert(),
        py::arg("b").noconvert());
}

}  // namespace fw
