// METH_FASTCALL bindings for the hot kernel entry points.
//
// pybind11 spends about a microsecond converting a dozen arguments; these entries parse
// ints, floats and tuples of ints straight from the CPython objects, which keeps the
// per-op overhead of small tensors low. Errors become the same exceptions pybind11 raises.
#pragma once

#include <Python.h>

#include <new>
#include <stdexcept>
#include <string>

#include "common.h"

namespace fw {

struct FastArgs {
  PyObject* const* a;
  Py_ssize_t n;
  const char* fn;

  // Reading Python objects needs the GIL: parse every argument before a NoGil section.
  void gil() const {
    if (!PyGILState_Check()) throw std::logic_error(std::string(fn) + ": argument read without the GIL");
  }
  void expect(Py_ssize_t k) const {
    if (n != k)
      throw std::invalid_argument(std::string(fn) + ": expected " + std::to_string(k) +
                                  " arguments, got " + std::to_string(n));
  }
  int64_t i(Py_ssize_t k) const {
    gil();
    int64_t v = PyLong_AsLongLong(a[k]);
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    return v;
  }
  uintptr_t ptr(Py_ssize_t k) const { return (uintptr_t)i(k); }
  double d(Py_ssize_t k) const {
    gil();
    double v = PyFloat_AsDouble(a[k]);
    if (v == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    return v;
  }
  bool b(Py_ssize_t k) const {
    gil();
    return PyObject_IsTrue(a[k]) == 1;
  }
  // A tuple (or list) of ints, e.g. a shape or strides.
  Shape shape(Py_ssize_t k) const {
    gil();
    PyObject* o = a[k];
    Shape s;
    if (PyTuple_Check(o)) {
      Py_ssize_t m = PyTuple_GET_SIZE(o);
      s.resize(m);
      for (Py_ssize_t j = 0; j < m; j++) {
        s[j] = PyLong_AsLongLong(PyTuple_GET_ITEM(o, j));
        if (s[j] == -1 && PyErr_Occurred()) throw py::error_already_set();
      }
    } else if (PyList_Check(o)) {
      Py_ssize_t m = PyList_GET_SIZE(o);
      s.resize(m);
      for (Py_ssize_t j = 0; j < m; j++) {
        s[j] = PyLong_AsLongLong(PyList_GET_ITEM(o, j));
        if (s[j] == -1 && PyErr_Occurred()) throw py::error_already_set();
      }
    } else {
      throw std::invalid_argument(std::string(fn) + ": expected a tuple of ints");
    }
    return s;
  }
};

// Releases the GIL for the duration of a large kernel so other Python threads can run.
struct NoGil {
  PyThreadState* st = nullptr;
  explicit NoGil(bool release) { if (release) st = PyEval_SaveThread(); }
  ~NoGil() { if (st) PyEval_RestoreThread(st); }
};

inline int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

// Sets the Python exception for the C++ one being handled: call it inside a catch (...).
// The same exceptions pybind11 would raise.
inline void set_python_error() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (NotImplemented& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
  } catch (std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

// F returns a new reference, or nullptr for None.
template <PyObject* (*F)(const FastArgs&)>
PyObject* fastcall_entry(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  const char* name = self ? PyUnicode_AsUTF8(self) : "kernel";
  try {
    PyObject* r = F(FastArgs{args, nargs, name});
    if (r) return r;
  } catch (...) {
    set_python_error();
    return nullptr;
  }
  Py_RETURN_NONE;
}

template <void (*F)(const FastArgs&)>
PyObject* returning_none(const FastArgs& a) {
  F(a);
  return nullptr;
}

template <PyObject* (*F)(const FastArgs&)>
void def_fast_impl(py::module_& m, const char* name, const char* doc) {
  auto* def = new PyMethodDef{name, (PyCFunction)(void (*)(void))fastcall_entry<F>,
                              METH_FASTCALL, doc};
  PyObject* self = PyUnicode_FromString(name);  // passed to the entry, names errors
  PyObject* f = PyCFunction_NewEx(def, self, m.attr("__name__").ptr());
  Py_DECREF(self);
  if (!f) throw py::error_already_set();
  m.attr(name) = py::reinterpret_steal<py::object>(f);
}

// Adds `name` to the module as a METH_FASTCALL builtin calling F (which returns nothing).
template <void (*F)(const FastArgs&)>
void def_fast(py::module_& m, const char* name, const char* doc) {
  def_fast_impl<returning_none<F>>(m, name, doc);
}

// Same for an F that returns a new reference (nullptr means None).
template <PyObject* (*F)(const FastArgs&)>
void def_fast_ret(py::module_& m, const char* name, const char* doc) {
  def_fast_impl<F>(m, name, doc);
}

}  // namespace fw
