"""Cases for creation ops against NumPy."""
import numpy as np

from opdb import Case


def c(fn):
    return [Case(fn)]


def _shared(fw, d):
    a = np.arange(6.0).reshape(2, 3)
    t = fw.from_numpy(a)
    a[0, 0] = 7
    return [(t, a), (fw.as_tensor(a), a), (fw.asarray(a[:, ::2]), a[:, ::2])]


CASES = {
    "tensor": c(lambda fw, d: [(fw.tensor([[1, 2], [3, 4]], device=d), np.array([[1, 2], [3, 4]])),
                               (fw.tensor(2.5, device=d), np.array(2.5)),
                               (fw.tensor([], device=d), np.zeros(0)),
                               (fw.tensor([True, False], device=d), np.array([True, False])),
                               (fw.tensor([1.5, 2], dtype=fw.float64, device=d), np.array([1.5, 2.0]))]),
    "as_tensor": c(lambda fw, d: (fw.as_tensor([1, 2, 3], device=d), np.array([1, 2, 3]))),
    "asarray": c(lambda fw, d: (fw.asarray([1.0, 2.0], device=d), np.array([1.0, 2.0]))),
    "from_numpy": c(_shared),
    "scalar_tensor": c(lambda fw, d: (fw.scalar_tensor(3, device=d), np.array(3.0))),
    "empty": c(lambda fw, d: (fw.empty(2, 0, 3, device=d), np.zeros((2, 0, 3)))),
    "empty_strided": c(lambda fw, d: (fw.empty_strided((2, 3), (1, 2), device=d).fill_(1), np.ones((2, 3)))),
    "full": c(lambda fw, d: [(fw.full((2, 3), 7, device=d), np.full((2, 3), 7)),
                             (fw.full((2,), 1.5, dtype=fw.float16, device=d), np.full(2, 1.5))]),
    "zeros": c(lambda fw, d: (fw.zeros(2, 3, dtype=fw.int32, device=d), np.zeros((2, 3)))),
    "ones": c(lambda fw, d: (fw.ones((4,), device=d), np.ones(4))),
    "empty_like": c(lambda fw, d: (fw.empty_like(fw.ones(2, 3, device=d)).fill_(0), np.zeros((2, 3)))),
    "full_like": c(lambda fw, d: (fw.full_like(fw.ones(2, device=d), 3), np.full(2, 3.0))),
    "zeros_like": c(lambda fw, d: (fw.zeros_like(fw.ones(2, device=d)), np.zeros(2))),
    "ones_like": c(lambda fw, d: (fw.ones_like(fw.zeros(2, dtype=fw.int8, device=d)), np.ones(2))),
    "new_empty": c(lambda fw, d: (fw.ones(1, device=d).new_empty(3).fill_(2), np.full(3, 2.0))),
    "new_zeros": c(lambda fw, d: (fw.ones(1, device=d).new_zeros(3), np.zeros(3))),
    "new_ones": c(lambda fw, d: (fw.ones(1, device=d).new_ones((2, 2)), np.ones((2, 2)))),
    "new_full": c(lambda fw, d: (fw.ones(1, device=d).new_full((2,), 4), np.full(2, 4.0))),
    "new_tensor": c(lambda fw, d: (fw.ones(1, device=d).new_tensor([1, 2]), np.array([1.0, 2.0]))),
    "arange": c(lambda fw, d: [(fw.arange(5, device=d), np.arange(5)),
                               (fw.arange(1, 2.5, 0.5, device=d), np.arange(1, 2.5, 0.5)),
                               (fw.arange(10, 0, -3, device=d), np.arange(10, 0, -3))]),
    "range": c(lambda fw, d: (fw.range(1, 4, device=d), np.arange(1.0, 5.0))),
    "linspace": c(lambda fw, d: [(fw.linspace(0, 1, 5, device=d), np.linspace(0, 1, 5)),
                                 (fw.linspace(-3, 7, 1, device=d), np.array([-3.0]))]),
    "logspace": c(lambda fw, d: (fw.logspace(0, 2, 3, device=d), np.array([1.0, 10.0, 100.0]))),
    "eye": c(lambda fw, d: [(fw.eye(3, device=d), np.eye(3)), (fw.eye(2, 4, device=d), np.eye(2, 4))]),
}
