"""Cases for the LU / LDL family, matrix_exp, Cholesky solves, householder_product, cond,
linalg.cross/vander/tensorinv/tensorsolve/diagonal, against NumPy float64 (identities
where NumPy has no such function: P L U = A, an explicit product of reflectors)."""
import warnings

import numpy as np

import framework as fw
from opdb import Case


def _t(a, device):
    return fw.tensor(a, dtype=fw.float64, device=device)


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def _spd(n, batch=(), seed=0):
    a = _rand(batch + (n, n), seed)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _quiet(fn, *args):
    """A deprecated function's result, without its deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def case(fn):
    return [Case(fn)]


A = _rand((2, 4, 4), 0)
B = _rand((2, 4, 3), 1)
SOL = np.linalg.solve(A, B)


def _plu(fw_, d):
    lu, piv = fw_.linalg.lu_factor(_t(A, d))
    P, L, U = fw_.lu_unpack(lu, piv)
    return [(P @ L @ U, A)]


def _lu_factor_ex(fw_, d):
    lu, piv, info = fw_.linalg.lu_factor_ex(_t(_rand((3, 5), 2), d))
    P, L, U = fw_.lu_unpack(lu, piv)
    return [(P @ L @ U, _rand((3, 5), 2)), (info, np.int32(0))]


def _householder(fw_, d, old=False):
    a, tau = _rand((5, 3), 3), _rand(2, 4)
    q = np.eye(5)
    for i in range(2):
        v = np.concatenate([np.zeros(i), [1.0], a[i + 1:, i]])
        q = q @ (np.eye(5) - tau[i] * np.outer(v, v))
    got = fw_.orgqr(_t(a, d), _t(tau, d)) if old else \
        fw_.linalg.householder_product(_t(a, d), _t(tau, d))
    return [(got, q[:, :3])]


def _expm(fw_, d):
    s = _spd(4) / 4
    w, v = np.linalg.eigh(s)
    return [(fw_.linalg.matrix_exp(_t(s, d)), (v * np.exp(w)) @ v.T),
            (fw_.linalg.matrix_exp(_t(np.zeros((2, 3, 3)), d)),
             np.broadcast_to(np.eye(3), (2, 3, 3)))]


def _ldl(fw_, d, ex):
    s = _rand((4, 4), 5)
    s = s + s.T
    r = fw_.linalg.ldl_factor_ex(_t(s, d)) if ex else fw_.linalg.ldl_factor(_t(s, d))
    x = fw_.linalg.ldl_solve(r[0], r[1], _t(np.eye(4), d))
    return [(x, np.linalg.inv(s))] + ([(r[2], np.int32(0))] if ex else [])


CASES = {
    "linalg.lu_factor_ex": case(_lu_factor_ex),
    "linalg.lu_factor": case(_plu),
    "linalg.lu": case(lambda fw_, d: [(fw_.matmul(*fw_.linalg.lu(_t(A, d))[:2]).matmul(
        fw_.linalg.lu(_t(A, d))[2]), A)]),
    "lu": case(lambda fw_, d: [(fw_.linalg.lu_solve(*_quiet(fw_.lu, _t(A, d)), _t(B, d)),
                                SOL)]),
    "lu_unpack": case(_plu),
    "linalg.lu_solve": case(lambda fw_, d: [
        (fw_.linalg.lu_solve(*fw_.linalg.lu_factor(_t(A, d)), _t(B, d)), SOL),
        (fw_.linalg.lu_solve(*fw_.linalg.lu_factor(_t(A, d)), _t(B, d), adjoint=True),
         np.linalg.solve(np.swapaxes(A, -1, -2), B))]),
    "lu_solve": case(lambda fw_, d: [(_quiet(fw_.lu_solve, _t(B, d),
                                             *fw_.linalg.lu_factor(_t(A, d))), SOL)]),
    "linalg.solve_ex": case(lambda fw_, d: list(zip(fw_.linalg.solve_ex(_t(A, d), _t(B, d)),
                                                    (SOL, np.zeros(2, np.int32))))),
    "linalg.inv_ex": case(lambda fw_, d: list(zip(fw_.linalg.inv_ex(_t(A, d)),
                                                  (np.linalg.inv(A), np.zeros(2, np.int32))))),
    "linalg.cholesky_ex": case(lambda fw_, d: list(zip(
        fw_.linalg.cholesky_ex(_t(_spd(4, (2,)), d)),
        (np.linalg.cholesky(_spd(4, (2,))), np.zeros(2, np.int32))))),
    "linalg.matrix_exp": case(_expm),
    "matrix_exp": case(lambda fw_, d: [(_t(np.diag([1.0, 2.0]), d).matrix_exp(),
                                        np.diag(np.exp([1.0, 2.0])))]),
    "cholesky_solve": case(lambda fw_, d: [
        (fw_.cholesky_solve(_t(B, d), _t(np.linalg.cholesky(_spd(4, (2,))), d)),
         np.linalg.solve(_spd(4, (2,)), B))]),
    "cholesky_inverse": case(lambda fw_, d: [
        (fw_.cholesky_inverse(_t(np.linalg.cholesky(_spd(4)).T, d), upper=True),
         np.linalg.inv(_spd(4)))]),
    "linalg.householder_product": case(_householder),
    "orgqr": case(lambda fw_, d: _householder(fw_, d, old=True)),
    "linalg.cond": case(lambda fw_, d: [(fw_.linalg.cond(_t(A, d), p), np.linalg.cond(A, p))
                                        for p in (None, 2, -2, "fro", "nuc", np.inf, -np.inf,
                                                  1, -1)]),
    "linalg.cross": case(lambda fw_, d: [(fw_.linalg.cross(_t(_rand((4, 3), 6), d),
                                                           _t(_rand((1, 3), 7), d)),
                                          np.cross(_rand((4, 3), 6), _rand((1, 3), 7)))]),
    "linalg.vander": case(lambda fw_, d: [(fw_.linalg.vander(_t(np.arange(1., 5.), d), N=3),
                                           np.vander(np.arange(1., 5.), 3, increasing=True))]),
    "linalg.tensorinv": case(lambda fw_, d: [
        (fw_.linalg.tensorinv(_t(_rand((4, 2, 2), 8), d), ind=1),
         np.linalg.tensorinv(_rand((4, 2, 2), 8), ind=1))]),
    "linalg.tensorsolve": case(lambda fw_, d: [
        (fw_.linalg.tensorsolve(_t(_rand((2, 3, 6), 9), d), _t(_rand((2, 3), 10), d)),
         np.linalg.tensorsolve(_rand((2, 3, 6), 9), _rand((2, 3), 10)))]),
    "linalg.diagonal": case(lambda fw_, d: [
        (fw_.linalg.diagonal(_t(_rand((2, 3, 4), 11), d), offset=1),
         np.diagonal(_rand((2, 3, 4), 11), 1, -2, -1))]),
    "linalg.ldl_factor_ex": case(lambda fw_, d: _ldl(fw_, d, True)),
    "linalg.ldl_factor": case(lambda fw_, d: _ldl(fw_, d, False)),
    "linalg.ldl_solve": case(lambda fw_, d: _ldl(fw_, d, False)),
}
