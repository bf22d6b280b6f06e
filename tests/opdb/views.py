"""Cases for view ops: values against NumPy, and that views share memory."""
import numpy as np

from helpers import make
from opdb import Case

X = (3, 4, 5)


def _src(fw, device, noncontig=False, shape=X):
    return make(shape, fw.float32, device, noncontig=noncontig, seed=1)


def _shares(fw, a, b):
    assert a._storage is b._storage


def _views(op):
    """Cases over contiguous and strided inputs of op(t) vs ref(np_array)."""
    def fn(fw, device):
        out = []
        for nc in (False, True):
            t, a = _src(fw, device, nc)
            got, ref = op(fw, t, a)
            out.append((got, ref))
        return out
    return [Case(fn)]


def _view_case(fw, device):
    t, a = _src(fw, device)
    v = t.view(12, 5)
    _shares(fw, v, t)
    return [(v, a.reshape(12, 5)), (t.view(-1), a.reshape(-1)), (t.view(fw.int32).view(fw.float32), a)]


def _unbind_like(op, ref):
    def fn(fw, device):
        t, a = _src(fw, device, True)
        return list(zip(op(fw, t), ref(a)))
    return [Case(fn)]


def _copy_case(fw, device):
    t, a = _src(fw, device, True)
    dst = fw.zeros(3, 4, 5, device=device, dtype=fw.float64)
    dst.copy_(t)
    row = fw.zeros(4, 5, device=device)
    dst2 = fw.zeros(3, 4, 5, device=device).copy_(row[0])
    return [(dst, a), (dst2, np.zeros(X))]


def _resize_case(fw, device):
    t = fw.arange(6, device=device)
    t.resize_(2, 5)
    assert t.shape == (2, 5)
    return [(t[0], np.arange(5))]


def _set_case(fw, device):
    t, a = _src(fw, device)
    u = fw.empty(0, device=device)
    u.set_(t)
    return [(u, a)]


def _as_strided(fw, t, a):
    return t.contiguous().as_strided((4, 3), (1, 4), 2), \
        np.lib.stride_tricks.as_strided(np.ascontiguousarray(a).reshape(-1)[2:], (4, 3), (a.itemsize, 4 * a.itemsize))


CASES = {
    "view": [Case(_view_case)],
    "reshape": _views(lambda fw, t, a: (t.reshape(5, -1), a.reshape(5, -1))),
    "view_as": _views(lambda fw, t, a: (t.contiguous().view_as(fw.empty(60)), a.reshape(60))),
    "reshape_as": _views(lambda fw, t, a: (t.reshape_as(fw.empty(6, 10)), a.reshape(6, 10))),
    "flatten": _views(lambda fw, t, a: (fw.flatten(t, 1), a.reshape(3, 20))),
    "unflatten": _views(lambda fw, t, a: (fw.unflatten(t, 1, (2, -1)), a.reshape(3, 2, 2, 5))),
    "squeeze": _views(lambda fw, t, a: (fw.squeeze(t[:, :1], 1), a[:, 0])),
    "unsqueeze": _views(lambda fw, t, a: (fw.unsqueeze(t, -1), a[..., None])),
    "transpose": _views(lambda fw, t, a: (fw.transpose(t, 0, 2), a.transpose(2, 1, 0))),
    "swapaxes": _views(lambda fw, t, a: (fw.swapaxes(t, 0, 1), a.swapaxes(0, 1))),
    "swapdims": _views(lambda fw, t, a: (fw.swapdims(t, 1, 2), a.swapaxes(1, 2))),
    "permute": _views(lambda fw, t, a: (fw.permute(t, (2, 0, 1)), a.transpose(2, 0, 1))),
    "t": _views(lambda fw, t, a: (fw.t(t[0]), a[0].T)),
    "adjoint": _views(lambda fw, t, a: (fw.adjoint(t), a.swapaxes(-1, -2))),
    "expand": _views(lambda fw, t, a: (t[:, :1].expand(3, 4, 2, 7, -1).sum if False else
                                       t[:, :1].expand(2, 3, 6, 5), np.broadcast_to(a[:, :1], (2, 3, 6, 5)))),
    "expand_as": _views(lambda fw, t, a: (t[:1].expand_as(t), np.broadcast_to(a[:1], X))),
    "broadcast_to": _views(lambda fw, t, a: (fw.broadcast_to(t, (2, 3, 4, 5)), np.broadcast_to(a, (2, 3, 4, 5)))),
    "broadcast_tensors": _views(lambda fw, t, a: (fw.broadcast_tensors(t, t[:1, :1])[1], np.broadcast_to(a[:1, :1], X))),
    "narrow": _views(lambda fw, t, a: (fw.narrow(t, 2, 1, 3), a[:, :, 1:4])),
    "select": _views(lambda fw, t, a: (fw.select(t, 1, -1), a[:, -1])),
    "unbind": _unbind_like(lambda fw, t: fw.unbind(t, 1), lambda a: [a[:, i] for i in range(4)]),
    "split": _unbind_like(lambda fw, t: fw.split(t, [1, 3], 1), lambda a: [a[:, :1], a[:, 1:]]) +
    _unbind_like(lambda fw, t: fw.split(t, 2, -1), lambda a: [a[..., :2], a[..., 2:4], a[..., 4:]]),
    "chunk": _unbind_like(lambda fw, t: fw.chunk(t, 2, 2), lambda a: [a[..., :3], a[..., 3:]]),
    "movedim": _views(lambda fw, t, a: (fw.movedim(t, 0, -1), np.moveaxis(a, 0, -1))),
    "moveaxis": _views(lambda fw, t, a: (fw.moveaxis(t, (0, 1), (2, 0)), np.moveaxis(a, (0, 1), (2, 0)))),
    "as_strided": _views(_as_strided),
    "unfold": _views(lambda fw, t, a: (t.unfold(2, 2, 2), np.stack([a[..., 0:2], a[..., 2:4]], 2))),
    "diagonal": _views(lambda fw, t, a: (fw.diagonal(t, 1, 1, 2), np.diagonal(a, 1, 1, 2))),
    "contiguous": _views(lambda fw, t, a: (t.transpose(0, 1).contiguous(), a.transpose(1, 0, 2))),
    "clone": _views(lambda fw, t, a: (fw.clone(t), a)),
    "copy_": [Case(_copy_case)],
    "fill_": [Case(lambda fw, d: (fw.empty(2, 3, device=d)[:, ::2].fill_(2.5), np.full((2, 2), 2.5)))],
    "zero_": [Case(lambda fw, d: (fw.ones(2, 3, device=d).zero_(), np.zeros((2, 3))))],
    "resize_": [Case(_resize_case)],
    "resize_as_": [Case(lambda fw, d: (fw.ones(6, device=d).resize_as_(fw.empty(2, 3)), np.ones((2, 3))))],
    "set_": [Case(_set_case)],
}
