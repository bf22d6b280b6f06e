// The cached Triton launcher's argument binding (framework/kernels/launcher.py), in C: on a
// GPU every kernel launch binds its arguments and computes the key of its compiled kernel,
// and in Python that took 3-6 us a launch (a dozen to three dozen parameters), more than the
// rest of a small op's host time.
//
// launch_bind(spec, args, kwargs) -> (values, key) for one way of calling a kernel:
//   spec = ((kind, where, constexpr) per parameter in order, option names): kind 0 takes
//   args[where], kind 1 kwargs[where], kind 2 the default `where`; the options are the
//   keywords that are not parameters (num_warps, ...), whose values end the key.
// values: the arguments in parameter order, a tensor as its address (data_ptr()).
// key: per parameter what Triton specializes on, as launcher._spec says it (its rules are
// repeated here for ints, tensors, floats, bools and None; other kinds go to _spec/_arg,
// which raise launcher._Unknown for a type not known there). A constexpr is its value, but
// an object of a registered identity type (a JITFunction) is keyed by its address: hashing
// one runs Python code; the launcher keeps the objects of the keys it stores alive.
#include <Python.h>

#include "fastcall.h"

namespace fw {
namespace {

struct Setup {
  PyObject* tensor_type = nullptr;  // framework's Tensor (subclasses too)
  PyObject* spec_fn = nullptr;      // launcher._spec
  PyObject* arg_fn = nullptr;       // launcher._arg
  PyObject* identity = nullptr;     // a tuple of types keyed by address
  PyObject* data_ptr = nullptr;     // interned names
  PyObject* dtype = nullptr;
  PyObject* small[17] = {};         // 0..16, the int keys
  PyObject* wide[2][2] = {};        // [16 | v][v >= 2^63]: the keys of ints past int32
};
Setup S;

PyObject* launch_bind_setup(const FastArgs& a) {
  a.expect(4);
  PyObject* objs[4] = {a.a[0], a.a[1], a.a[2], a.a[3]};
  if (!PyType_Check(objs[0]) || !PyTuple_Check(objs[3]))
    throw std::invalid_argument("launch_bind_setup(tensor_type, spec, arg, identity_types)");
  for (auto* o : objs) Py_INCREF(o);
  S.tensor_type = objs[0];
  S.spec_fn = objs[1];
  S.arg_fn = objs[2];
  S.identity = objs[3];
  S.data_ptr = PyUnicode_InternFromString("data_ptr");
  S.dtype = PyUnicode_InternFromString("dtype");
  for (int i = 0; i <= 16; i++) S.small[i] = PyLong_FromLong(i);
  for (int d = 0; d < 2; d++)
    for (int u = 0; u < 2; u++)
      S.wide[d][u] = PyTuple_Pack(2, d ? Py_True : Py_False, u ? Py_True : Py_False);
  return nullptr;
}

// New references throughout; nullptr with a Python error set on failure.
PyObject* call1(PyObject* fn, PyObject* v) { return PyObject_CallOneArg(fn, v); }

// Triton's specialization of an int: in the int32 range 16 for 1, else its residue mod 16;
// beyond it (i64, u64: a float's bits, a large offset) (16 | v, v >= 2^63). nullptr (no
// error) when v is not an exact int, or one below int64's range (launcher._spec's case).
PyObject* int_key(PyObject* v) {
  if (!PyLong_CheckExact(v)) return nullptr;
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  PyObject* k;
  if (!overflow && x >= INT32_MIN && x <= INT32_MAX) {
    k = S.small[x == 1 ? 16 : (x & 15)];
  } else if (!overflow) {
    k = S.wide[!(x & 15)][0];
  } else if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(v);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) {
      PyErr_Clear();  // past u64: launcher._spec keys it, Triton's launcher refuses it
      return nullptr;
    }
    k = S.wide[!(u & 15)][1];
  } else {
    return nullptr;
  }
  Py_INCREF(k);
  return k;
}

// The key of a runtime argument that is not a tensor (a tensor inside a tuple included).
PyObject* scalar_key(PyObject* v) {
  if (PyObject* k = int_key(v)) return k;
  if (PyFloat_CheckExact(v) || PyBool_Check(v) || v == Py_None) {
    PyObject* t = (PyObject*)Py_TYPE(v);
    Py_INCREF(t);
    return t;
  }
  if (PyTuple_CheckExact(v)) {
    Py_ssize_t n = PyTuple_GET_SIZE(v);
    PyObject* r = PyTuple_New(n);
    if (!r) return nullptr;
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject* k = scalar_key(PyTuple_GET_ITEM(v, i));
      if (!k) {
        Py_DECREF(r);
        return nullptr;
      }
      PyTuple_SET_ITEM(r, i, k);
    }
    return r;
  }
  return call1(S.spec_fn, v);
}

// (value, key) of a runtime argument into *val and *key (new references); false on error.
bool runtime_arg(PyObject* v, PyObject** val, PyObject** key) {
  if (PyObject_TypeCheck(v, (PyTypeObject*)S.tensor_type)) {
    PyObject* p = PyObject_CallMethodNoArgs(v, S.data_ptr);
    if (!p) return false;
    unsigned long long addr = PyLong_AsUnsignedLongLong(p);
    if (addr == (unsigned long long)-1 && PyErr_Occurred()) {
      Py_DECREF(p);
      return false;
    }
    PyObject* dt = PyObject_GetAttr(v, S.dtype);
    if (!dt) {
      Py_DECREF(p);
      return false;
    }
    PyObject* k = PyTuple_Pack(2, dt, (addr & 15) ? Py_False : Py_True);
    Py_DECREF(dt);
    if (!k) {
      Py_DECREF(p);
      return false;
    }
    *val = p;
    *key = k;
    return true;
  }
  if (PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyBool_Check(v) || v == Py_None ||
      PyTuple_CheckExact(v)) {
    PyObject* k = scalar_key(v);
    if (!k) return false;
    Py_INCREF(v);
    *val = v;
    *key = k;
    return true;
  }
  PyObject* r = call1(S.arg_fn, v);  // (value, key), or raises _Unknown
  if (!r) return false;
  if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
    Py_DECREF(r);
    PyErr_SetString(PyExc_TypeError, "launcher._arg must return (value, key)");
    return false;
  }
  *val = PyTuple_GET_ITEM(r, 0);
  *key = PyTuple_GET_ITEM(r, 1);
  Py_INCREF(*val);
  Py_INCREF(*key);
  Py_DECREF(r);
  return true;
}

PyObject* constexpr_key(PyObject* v) {
  Py_ssize_t n = PyTuple_GET_SIZE(S.identity);
  for (Py_ssize_t i = 0; i < n; i++)
    if ((PyObject*)Py_TYPE(v) == PyTuple_GET_ITEM(S.identity, i)) return PyLong_FromVoidPtr(v);
  Py_INCREF(v);
  return v;
}

PyObject* launch_bind(const FastArgs& a) {
  a.expect(3);
  if (!S.tensor_type) throw std::logic_error("launch_bind: launch_bind_setup was not called");
  PyObject *spec = a.a[0], *args = a.a[1], *kwargs = a.a[2];
  if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2 || !PyTuple_Check(args) ||
      !PyDict_Check(kwargs))
    throw std::invalid_argument("launch_bind(spec, args: tuple, kwargs: dict)");
  PyObject* params = PyTuple_GET_ITEM(spec, 0);
  PyObject* options = PyTuple_GET_ITEM(spec, 1);
  Py_ssize_t n = PyTuple_GET_SIZE(params), no = PyTuple_GET_SIZE(options);
  PyObject* vals = PyTuple_New(n);
  PyObject* key = PyTuple_New(n + 1);
  PyObject* opts = PyTuple_New(no);
  auto fail = [&]() -> PyObject* {
    Py_XDECREF(vals);
    Py_XDECREF(key);
    Py_XDECREF(opts);
    throw py::error_already_set();
  };
  if (!vals || !key || !opts) return fail();
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* p = PyTuple_GET_ITEM(params, i);
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(p, 0));
    PyObject* where = PyTuple_GET_ITEM(p, 1);
    PyObject* v;  // borrowed
    if (kind == 0) {
      Py_ssize_t j = PyLong_AsSsize_t(where);
      if (j < 0 || j >= PyTuple_GET_SIZE(args)) {
        PyErr_SetString(PyExc_IndexError, "launch_bind: positional argument missing");
        return fail();
      }
      v = PyTuple_GET_ITEM(args, j);
    } else if (kind == 1) {
      v = PyDict_GetItemWithError(kwargs, where);
      if (!v) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, where);
        return fail();
      }
    } else {
      v = where;
    }
    PyObject *val, *k;
    if (PyTuple_GET_ITEM(p, 2) == Py_True) {
      k = constexpr_key(v);
      if (!k) return fail();
      Py_INCREF(v);
      val = v;
    } else if (!runtime_arg(v, &val, &k)) {
      return fail();
    }
    PyTuple_SET_ITEM(vals, i, val);
    PyTuple_SET_ITEM(key, i, k);
  }
  for (Py_ssize_t i = 0; i < no; i++) {
    PyObject* v = PyDict_GetItemWithError(kwargs, PyTuple_GET_ITEM(options, i));
    if (!v) {
      if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, PyTuple_GET_ITEM(options, i));
      return fail();
    }
    Py_INCREF(v);
    PyTuple_SET_ITEM(opts, i, v);
  }
  PyTuple_SET_ITEM(key, n, opts);
  opts = nullptr;
  PyObject* r = PyTuple_Pack(2, vals, key);
  Py_DECREF(vals);
  Py_DECREF(key);
  if (!r) throw py::error_already_set();
  return r;
}

}  // namespace

void register_launch_bind(py::module_& m) {
  def_fast_ret<launch_bind_setup>(m, "launch_bind_setup",
                                  "launch_bind_setup(tensor_type, spec, arg, identity_types)");
  def_fast_ret<launch_bind>(m, "launch_bind",
                            "launch_bind(spec, args, kwargs) -> (values, key)");
}

}  // namespace fw
