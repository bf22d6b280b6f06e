"""Shared checks for nn tests: a framework module (or function) against torch's, with the
same weights copied across, forward outputs and every gradient compared."""
import numpy as np

import framework as fw
from tests.helpers import assert_close


def to_np(t):
    """A framework or torch tensor as a NumPy array (detached, on the host; bfloat16,
    which NumPy lacks, as float32)."""
    t = t.detach().cpu()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return t.numpy()


def fw_tensor(a, device, requires_grad=False, dtype=None):
    """A framework tensor holding the values of ``a`` (NumPy array or torch tensor)."""
    a = a.detach().cpu().numpy() if hasattr(a, "detach") else np.asarray(a)
    t = fw.tensor(a, device=device, dtype=dtype)
    return t.requires_grad_() if requires_grad else t


def copy_state(fw_module, t_module):
    """Copies every parameter and buffer of ``t_module`` into ``fw_module`` by name (the
    two must have the same state_dict keys and shapes)."""
    t_sd = t_module.state_dict()
    f_sd = fw_module.state_dict()
    assert list(t_sd) == list(f_sd), (list(t_sd), list(f_sd))
    with fw.no_grad():
        for k, v in t_sd.items():
            assert tuple(f_sd[k].shape) == tuple(v.shape), (k, f_sd[k].shape, v.shape)
            f_sd[k].copy_(fw.tensor(v.detach().cpu().numpy(), device=f_sd[k].device))


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _flat(x)]
    return [out] if out is not None and hasattr(out, "shape") else []


def compare_module(torch, fw_module, t_module, inputs, device, rtol=1e-4, atol=1e-5,
                   copy=True, kwargs=None, grad_inputs=True):
    """Runs both modules on ``inputs`` (NumPy arrays or torch tensors; float ones get
    requires_grad when ``grad_inputs``), compares outputs, then backpropagates the same
    random cotangent through every float output and compares input and parameter grads."""
    kwargs = kwargs or {}
    if copy:
        copy_state(fw_module, t_module)
    fw_module.to(device)
    t_in, f_in = [], []
    for a in inputs:
        ta = a if hasattr(a, "detach") else torch.tensor(np.asarray(a))
        ta = ta.detach().clone()
        if grad_inputs and ta.is_floating_point():
            ta.requires_grad_()
        t_in.append(ta)
        f_in.append(fw_tensor(ta, device, requires_grad=ta.requires_grad))
    t_out = _flat(t_module(*t_in, **kwargs))
    f_out = _flat(fw_module(*f_in, **kwargs))
    assert len(t_out) == len(f_out)
    rng = np.random.default_rng(0)
    t_loss, f_loss = 0, 0
    for to, fo in zip(t_out, f_out):
        assert tuple(fo.shape) == tuple(to.shape), (fo.shape, to.shape)
        assert str(fo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1], (fo.dtype, to.dtype)
        assert_close(fo, to_np(to), rtol=rtol, atol=atol)
        if to.requires_grad and to.is_floating_point():
            g = rng.standard_normal(tuple(to.shape))
            t_loss = t_loss + (to * torch.tensor(g, dtype=to.dtype)).sum()
            f_loss = f_loss + (fo * fw.tensor(g, dtype=fo.dtype, device=device)).sum()
    if not hasattr(t_loss, "backward"):
        return f_out
    t_loss.backward()
    f_loss.backward()
    for ta, fa in zip(t_in, f_in):
        if ta.requires_grad:
            assert (ta.grad is None) == (fa.grad is None)
            if ta.grad is not None:
                assert_close(fa.grad, to_np(ta.grad), rtol=rtol, atol=atol)
    t_params = dict(t_module.named_parameters())
    for name, fp in fw_module.named_parameters():
        tp = t_params[name]
        assert (tp.grad is None) == (fp.grad is None), name
        if tp.grad is not None:
            assert_close(fp.grad, to_np(tp.grad), rtol=rtol, atol=atol)
    return f_out
