"""framework.cond and framework.while_loop (eager semantics) against PyTorch's."""
import numpy as np
import pytest

import framework as fw
from helpers import to_np

torch = pytest.importorskip("torch")


def _pair(arr, device, requires_grad=False):
    return (fw.tensor(arr, dtype=fw.float64, device=device, requires_grad=requires_grad),
            torch.tensor(arr, dtype=torch.float64, requires_grad=requires_grad))


@pytest.mark.parametrize("pred", [True, False, 1, 0.0, "tensor_true", "tensor_false",
                                  "one_element"])
def test_cond_picks_the_branch_and_differentiates(device, pred):
    xf, xt = _pair(np.linspace(-1, 1, 5), device, requires_grad=True)
    if pred == "tensor_true":
        pf, pt = fw.tensor(True, device=device), torch.tensor(True)
    elif pred == "tensor_false":
        pf, pt = fw.tensor(False, device=device), torch.tensor(False)
    elif pred == "one_element":
        pf, pt = fw.tensor([2.5], device=device), torch.tensor([2.5])
    else:
        pf = pt = pred
    out_f = fw.cond(pf, lambda x: x.sin() * 2, lambda x: x.cos() + 1, (xf,))
    out_t = torch.cond(pt, lambda x: x.sin() * 2, lambda x: x.cos() + 1, (xt,))
    np.testing.assert_allclose(to_np(out_f), out_t.detach().numpy(), rtol=1e-12)
    out_f.sum().backward()
    out_t.sum().backward()
    np.testing.assert_allclose(to_np(xf.grad), xt.grad.numpy(), rtol=1e-12)


def test_cond_operands_list_nested_and_empty():
    a, b = fw.ones(2), fw.full((2,), 3.0)
    assert fw.cond(True, lambda p, q: p + q, lambda p, q: p - q, [a, b]).tolist() == [4.0, 4.0]
    out = fw.cond(fw.tensor(False), lambda d: d["x"] * 2, lambda d: d["x"] * 3, ({"x": a},))
    assert out.tolist() == [3.0, 3.0]
    assert fw.cond(fw.tensor(True), lambda: fw.ones(1), lambda: fw.zeros(1)).tolist() == [1.0]


def _torch_error(fn, *args):
    with pytest.raises(Exception) as e:
        fn(*args)
    return type(e.value), str(e.value)


@pytest.mark.parametrize("case", ["multi_element", "str_pred", "not_callable", "operands"])
def test_cond_errors_match_torch(case):
    x = [1.0, 2.0]
    f_branch = t_branch = (lambda v: v)
    if case == "multi_element":
        fa = (fw.tensor([True, False]), f_branch, f_branch, (fw.tensor(x),))
        ta = (torch.tensor([True, False]), t_branch, t_branch, (torch.tensor(x),))
    elif case == "str_pred":
        fa = ("a", f_branch, f_branch, (fw.tensor(x),))
        ta = ("a", t_branch, t_branch, (torch.tensor(x),))
    elif case == "not_callable":
        fa = (fw.tensor(True), 3, f_branch, (fw.tensor(x),))
        ta = (torch.tensor(True), 3, t_branch, (torch.tensor(x),))
    else:
        fa = (fw.tensor(True), f_branch, f_branch, (fw.tensor(x), 3))
        ta = (torch.tensor(True), t_branch, t_branch, (torch.tensor(x), 3))
    ftype, fmsg = _torch_error(fw.cond, *fa)
    ttype, tmsg = _torch_error(torch.cond, *ta)
    assert ftype is RuntimeError and ttype is RuntimeError
    # the messages print the offending value: tensors print as "tensor(...)" in both
    assert fmsg.split(",")[0].split(" but got")[0] == tmsg.split(",")[0].split(" but got")[0]


def test_while_loop_matches_torch(device):
    xf, xt = _pair([1.0, 2.0], device)
    body_f = lambda i, x: (i + 1, x * 2 + i)         # noqa: E731
    body_t = lambda i, x: (i + 1, x * 2 + i)         # noqa: E731
    out_f = fw.while_loop(lambda i, x: i < 4, body_f, (fw.tensor(0, device=device), xf))
    out_t = torch.while_loop(lambda i, x: i < 4, body_t, (torch.tensor(0), xt))
    assert isinstance(out_f, tuple) and len(out_f) == 2
    assert int(out_f[0]) == int(out_t[0]) == 4
    np.testing.assert_allclose(to_np(out_f[1]), out_t[1].numpy())


def test_while_loop_no_iteration_clones():
    i, x = fw.tensor(7), fw.ones(3)
    oi, ox = fw.while_loop(lambda i, x: i < 4, lambda i, x: (i + 1, x + 1), (i, x))
    assert int(oi) == 7 and ox.tolist() == [1.0, 1.0, 1.0]
    assert ox.data_ptr() != x.data_ptr()       # results never alias the inputs
    # python ints and bool predicates are carried as in PyTorch
    assert fw.while_loop(lambda n, x: n < 3, lambda n, x: (n + 1, x * 2), (0, x))[0] == 3


def test_while_loop_errors_match_torch():
    def c(i, x):
        return i < 2

    def b(i, x):
        return i + 1, x

    cases = [
        ((3, b, (fw.tensor(0), fw.ones(2))), (3, b, (torch.tensor(0), torch.ones(2)))),
    ]
    for fa, ta in cases:
        ftype, fmsg = _torch_error(fw.while_loop, *fa)
        ttype, tmsg = _torch_error(torch.while_loop, *ta)
        assert (ftype, fmsg) == (ttype, tmsg)
    with pytest.raises(RuntimeError, match="carried_inputs must be a tuple or list"):
        fw.while_loop(c, b, fw.ones(2))
    with pytest.raises(RuntimeError, match="only ?consists of tensor or int leaves"):
        fw.while_loop(c, b, (fw.tensor(0), "a"))
    with pytest.raises(RuntimeError, match="cond_fn must return a boolean scalar tensor"):
        fw.while_loop(lambda i, x: fw.tensor([True, True]), b, (fw.tensor(0), fw.ones(2)))
    with pytest.raises(AssertionError, match="should return the same number of elements"):
        fw.while_loop(c, lambda i, x: (i + 1,), (fw.tensor(0), fw.ones(2)))
    with pytest.raises(AssertionError, match="body_fn should return a tuple"):
        fw.while_loop(c, lambda i, x: [i + 1, x], (fw.tensor(0), fw.ones(2)))
