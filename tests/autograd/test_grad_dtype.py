"""Tensor.grad_dtype: the dtype a leaf's gradient is accumulated in, against PyTorch."""
import pytest

import framework


def _grad_dtype_story(torch):
    out = []
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    for f in (lambda: y.grad_dtype, lambda: setattr(y, "grad_dtype", torch.float64),
              lambda: setattr(x, "grad_dtype", 3)):
        with pytest.raises(RuntimeError) as err:
            f()
        out.append(str(err.value)[:40])
    out.append(torch.arange(3).grad_dtype)
    # None: any dtype; an existing gradient keeps its dtype while accumulating
    x.grad_dtype = None
    x.grad = torch.ones(3, dtype=torch.float16)
    (x * 2).sum().backward()
    out += [x.grad.dtype, x.grad.tolist()]
    with pytest.raises(RuntimeError, match="already a gradient"):
        x.grad_dtype = torch.float32
    # a set dtype: assignment checked, backward and autograd.grad cast to it
    x2 = torch.ones(3, requires_grad=True)
    x2.grad_dtype = torch.float16
    with pytest.raises(RuntimeError, match="grad_dtype 'Half'"):
        x2.grad = torch.ones(3)
    (x2 * 2).sum().backward()
    out += [x2.grad.dtype, torch.autograd.grad((x2 * 2).sum(), x2)[0].dtype]
    x3 = torch.ones(3, requires_grad=True)
    x3.grad_dtype = None      # the first gradient's own dtype
    (x3.double() * 2).sum().backward()
    out.append(x3.grad.dtype)
    x4 = torch.ones(3, requires_grad=True)
    x4.grad_dtype = torch.float64
    (x4 * 3).sum().backward()
    (x4 * 3).sum().backward()
    out += [x4.grad.dtype, x4.grad.tolist(), x4.grad_dtype]
    return [str(o).replace("torch.", "").replace("framework.", "") for o in out]


def test_grad_dtype_as_pytorch():
    torch = pytest.importorskip("torch")
    assert _grad_dtype_story(framework) == _grad_dtype_story(torch)
