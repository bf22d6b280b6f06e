"""Cases for the linalg family against NumPy float64: products over dtypes (integer-valued
inputs so that every dtype is exact), strided and batched inputs; decompositions in float64
on well-conditioned matrices."""
import numpy as np

import framework as fw
from opdb import Case

PROD_DTYPES = [fw.float32, fw.float64, fw.float16, fw.bfloat16, fw.int32, fw.int64, fw.uint8]


def ints(shape, dtype, device, seed, transposed=False):
    """An integer-valued tensor in [-3, 3] ([0, 3] for uint8) and its float64 value; with
    ``transposed`` the tensor is a non-contiguous transposed view of the same values."""
    rng = np.random.default_rng(seed)
    lo = 0 if dtype is fw.uint8 else -3
    arr = rng.integers(lo, 4, shape).astype(np.float64)
    if transposed and len(shape) >= 2:
        t = fw.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)), dtype=dtype,
                      device=device).mT
    else:
        t = fw.tensor(arr, dtype=dtype, device=device)
    return t, arr


def spd(n, batch=(), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def products(fn, ref, shapes):
    def case(fw_, device):
        out = []
        for dt in PROD_DTYPES:
            for i, shp in enumerate(shapes):
                ts, arrs = zip(*[ints(s, dt, device, 10 * i + j, transposed=j == 1)
                                 for j, s in enumerate(shp)])
                expect = ref(*arrs)
                if dt is fw.uint8:
                    expect = np.mod(expect, 256)
                out.append((fn(fw_, *ts), expect))
        return out
    return [Case(case)]


def decomp(fn):
    def case(fw_, device):
        return fn(fw_, device)
    return [Case(case)]


def _t(a, device):
    return fw.tensor(a, dtype=fw.float64, device=device)


def _qr(fw_, device):
    a = np.random.default_rng(1).standard_normal((2, 5, 3))
    q, r = fw_.linalg.qr(_t(a, device))
    return [(fw_.matmul(q, r), a), (fw_.matmul(q.mT, q), np.broadcast_to(np.eye(3), (2, 3, 3)))]


def _old_qr(fw_, device):
    a = np.random.default_rng(6).standard_normal((5, 3))
    q, r = fw_.qr(_t(a, device))
    qc, rc = fw_.qr(_t(a, device), some=False)
    return [(fw_.matmul(q, r), a), (fw_.matmul(qc, rc), a), (fw_.matmul(qc.mT, qc), np.eye(5)),
            (rc[3:], np.zeros((2, 3)))]


def _svd(fw_, device):
    a = np.random.default_rng(2).standard_normal((4, 3))
    u, s, vh = fw_.linalg.svd(_t(a, device), full_matrices=False)
    return [(s, np.linalg.svd(a, compute_uv=False)),
            (fw_.matmul(u * s, vh), a)]


def _old_svd(fw_, device):
    a = np.random.default_rng(3).standard_normal((4, 3))
    u, s, v = fw_.svd(_t(a, device))
    return [(fw_.matmul(u * s, v.mT), a), (s, np.linalg.svd(a, compute_uv=False))]


def _eigh(fw_, device):
    a = spd(4, seed=4)
    w, v = fw_.linalg.eigh(_t(a, device))
    return [(w, np.linalg.eigvalsh(a)), (fw_.matmul(v * w, v.mT), a)]


def _lstsq(fw_, device):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    r = fw_.linalg.lstsq(_t(a, device), _t(b, device))
    return [(r.solution, np.linalg.lstsq(a, b, rcond=None)[0])]


CASES = {
    "matmul": products(lambda fw_, a, b: fw_.matmul(a, b), np.matmul,
                       [((3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2)), ((4,), (2, 4, 3)),
                        ((3, 4), (4,)), ((5,), (5,)), ((2, 0), (0, 3))]),
    "linalg.matmul": products(lambda fw_, a, b: fw_.linalg.matmul(a, b), np.matmul,
                              [((3, 4), (2, 4, 5))]),
    "mm": products(lambda fw_, a, b: fw_.mm(a, b), np.matmul, [((3, 4), (4, 5)), ((1, 7), (7, 1))]),
    "bmm": products(lambda fw_, a, b: fw_.bmm(a, b), np.matmul, [((2, 3, 4), (2, 4, 5))]),
    "mv": products(lambda fw_, a, b: fw_.mv(a, b), np.matmul, [((3, 4), (4,))]),
    "dot": products(lambda fw_, a, b: fw_.dot(a, b), np.dot, [((6,), (6,)), ((0,), (0,))]),
    "vdot": products(lambda fw_, a, b: fw_.vdot(a, b), np.dot, [((6,), (6,))]),
    "outer": products(lambda fw_, a, b: fw_.outer(a, b), np.outer, [((3,), (4,))]),
    "addmm": products(lambda fw_, c, a, b: fw_.addmm(c, a, b, beta=2, alpha=3),
                      lambda c, a, b: 2 * c + 3 * (a @ b), [((3, 5), (3, 4), (4, 5)),
                                                            ((5,), (3, 4), (4, 5))]),
    "addmv": products(lambda fw_, c, a, b: fw_.addmv(c, a, b, beta=2, alpha=3),
                      lambda c, a, b: 2 * c + 3 * (a @ b), [((3,), (3, 4), (4,))]),
    "addbmm": products(lambda fw_, c, a, b: fw_.addbmm(c, a, b),
                       lambda c, a, b: c + (a @ b).sum(0), [((3, 5), (2, 3, 4), (2, 4, 5))]),
    "baddbmm": products(lambda fw_, c, a, b: fw_.baddbmm(c, a, b, alpha=2),
                        lambda c, a, b: c + 2 * (a @ b), [((1, 5), (2, 3, 4), (2, 4, 5))]),
    "einsum": products(lambda fw_, a, b: fw_.einsum("bij,bjk->bik", a, b), np.matmul,
                       [((2, 3, 4), (2, 4, 5))]),
    "tensordot": products(lambda fw_, a, b: fw_.tensordot(a, b, dims=2),
                          lambda a, b: np.tensordot(a, b, axes=2), [((2, 3, 4), (3, 4, 5))]),
    "kron": products(lambda fw_, a, b: fw_.kron(a, b), np.kron, [((2, 3), (3, 2))]),
    "trace": products(lambda fw_, a: fw_.trace(a), np.trace, [((4, 3),)]),
    "linalg.vecdot": decomp(lambda fw_, d: [
        (fw_.linalg.vecdot(_t(np.arange(12.).reshape(3, 4), d), _t(np.ones(4), d)),
         np.arange(12.).reshape(3, 4).sum(-1))]),
    "inverse": decomp(lambda fw_, d: [(fw_.inverse(_t(spd(3), d)), np.linalg.inv(spd(3)))]),
    "linalg.inv": decomp(lambda fw_, d: [(fw_.linalg.inv(_t(spd(3, (2,)), d)),
                                          np.linalg.inv(spd(3, (2,))))]),
    "det": decomp(lambda fw_, d: [(fw_.det(_t(spd(3), d)), np.linalg.det(spd(3)))]),
    "linalg.det": decomp(lambda fw_, d: [(fw_.linalg.det(_t(spd(3, (2,)), d)),
                                          np.linalg.det(spd(3, (2,))))]),
    "linalg.solve": decomp(lambda fw_, d: [(fw_.linalg.solve(_t(spd(3), d), _t(np.ones((3, 2)), d)),
                                            np.linalg.solve(spd(3), np.ones((3, 2))))]),
    "linalg.cholesky": decomp(lambda fw_, d: [(fw_.linalg.cholesky(_t(spd(4), d)),
                                               np.linalg.cholesky(spd(4)))]),
    "linalg.qr": decomp(_qr),
    "qr": decomp(_old_qr),
    "linalg.svd": decomp(_svd),
    "svd": decomp(_old_svd),
    "linalg.eigh": decomp(_eigh),
    "linalg.lstsq": decomp(_lstsq),
    "linalg.norm": decomp(lambda fw_, d: [(fw_.linalg.norm(_t(spd(3), d)), np.linalg.norm(spd(3))),
                                          (fw_.linalg.norm(_t(spd(3), d), ord=2),
                                           np.linalg.norm(spd(3), ord=2))]),
    "linalg.vector_norm": decomp(lambda fw_, d: [
        (fw_.linalg.vector_norm(_t(spd(3), d), ord=o, dim=1), np.linalg.norm(spd(3), ord=o, axis=1))
        for o in (1, 2, 3, np.inf)]),
    "linalg.matrix_norm": decomp(lambda fw_, d: [
        (fw_.linalg.matrix_norm(_t(spd(3, (2,)), d), ord=o),
         np.linalg.norm(spd(3, (2,)), ord=o, axis=(-2, -1))) for o in ("fro", "nuc", 1, -2)]),
    "linalg.multi_dot": products(lambda fw_, a, b, c: fw_.linalg.multi_dot([a, b, c]),
                                 lambda a, b, c: a @ b @ c, [((4,), (4, 2), (2, 3)),
                                                             ((2, 5), (5, 3), (3,))]),
    "chain_matmul": products(lambda fw_, a, b, c: fw_.chain_matmul(a, b, c),
                             lambda a, b, c: a @ b @ c, [((2, 4), (4, 5), (5, 3))]),
    "linalg.matrix_power": products(lambda fw_, a: fw_.linalg.matrix_power(a, 3),
                                    lambda a: a @ a @ a, [((2, 3, 3),)]),
    "matrix_power": products(lambda fw_, a: a.matrix_power(2), lambda a: a @ a, [((3, 3),)]),
    "linalg.slogdet": decomp(lambda fw_, d: list(zip(fw_.linalg.slogdet(_t(-spd(3), d)),
                                                     np.linalg.slogdet(-spd(3))))),
    "slogdet": decomp(lambda fw_, d: list(zip(fw_.slogdet(_t(spd(3), d)),
                                              np.linalg.slogdet(spd(3))))),
    "logdet": decomp(lambda fw_, d: [(fw_.logdet(_t(spd(3), d)), np.linalg.slogdet(spd(3))[1])]),
    "linalg.pinv": decomp(lambda fw_, d: [(fw_.linalg.pinv(_t(np.arange(6.).reshape(3, 2), d)),
                                           np.linalg.pinv(np.arange(6.).reshape(3, 2)))]),
    "pinverse": decomp(lambda fw_, d: [(fw_.pinverse(_t(np.arange(6.).reshape(2, 3), d)),
                                        np.linalg.pinv(np.arange(6.).reshape(2, 3)))]),
    "linalg.eigvalsh": decomp(lambda fw_, d: [(fw_.linalg.eigvalsh(_t(spd(3), d)),
                                               np.linalg.eigvalsh(spd(3)))]),
    "linalg.svdvals": decomp(lambda fw_, d: [(fw_.linalg.svdvals(_t(spd(3)[:2], d)),
                                              np.linalg.svd(spd(3)[:2], compute_uv=False))]),
    "linalg.matrix_rank": decomp(lambda fw_, d: [(fw_.linalg.matrix_rank(_t(np.ones((3, 4)), d)),
                                                  np.int64(1))]),
    "linalg.solve_triangular": decomp(lambda fw_, d: [
        (fw_.linalg.solve_triangular(_t(spd(3), d), _t(np.ones((3, 2)), d), upper=True),
         np.linalg.solve(np.triu(spd(3)), np.ones((3, 2))))]),
}
