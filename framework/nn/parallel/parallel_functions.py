"""The functional forms of single-process data parallelism (PyTorch's
``torch.nn.parallel.scatter``/``gather``/``replicate``/``parallel_apply``/``data_parallel``).

Devices are cuda indices, ``"cuda:i"`` strings or devices as in PyTorch; ``"cpu"`` is also
accepted (PyTorch's need cuda), so the functions can be used, and tested, without a GPU.
Replicas share the original module's parameters differentiably: the backward of an output
computed by a replica accumulates into the original parameters' ``.grad``.
``parallel_apply`` runs the replicas one after the other in the calling thread (PyTorch
uses a thread per replica): the outputs, gradients and exceptions are the same.
"""
import traceback
import warnings

import framework as fw


__all__ = ["scatter", "scatter_kwargs", "gather", "replicate", "parallel_apply",
           "data_parallel"]


def _device(d):
    """A device from a cuda index, a string or a device; -1 means the cpu (as in
    ``gather``)."""
    if isinstance(d, fw.device):
        return d
    if isinstance(d, int):
        return fw.device("cpu") if d == -1 else fw.device("cuda", d)
    if isinstance(d, str):
        return fw.device(d)
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:"
                     f"{d}")


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


# ---- scatter / gather -------------------------------------------------------------------------
def scatter(inputs, target_gpus, dim=0):
    """Slices the tensors in ``inputs`` (nested in tuples, lists, dicts) into about equal
    chunks along ``dim``, one per device of ``target_gpus``; other objects are repeated.
    Returns one entry per chunk."""
    devices = [_device(d) for d in target_gpus]

    def scatter_map(obj):
        if isinstance(obj, fw.Tensor):
            chunks = obj.chunk(len(devices), dim)
            return tuple(c.to(dev) for c, dev in zip(chunks, devices))
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in devices]

    try:
        return scatter_map(inputs)
    finally:
        scatter_map = None      # the closure refers to itself: break the cycle


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """``scatter`` of the positional and of the keyword arguments, padded to the same
    number of chunks: (tuple of argument tuples, tuple of kwargs dicts)."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) -
                                                  len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) -
                                                  len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """Concatenates the tensors of ``outputs`` (one entry per replica, nested alike) along
    ``dim`` on ``target_device`` (-1: the cpu); 0-dim tensors are stacked into a vector."""
    target = _device(target_device)

    def gather_map(outs):
        out = outs[0]
        if isinstance(out, fw.Tensor):
            if all(o.dim() == 0 for o in outs):
                warnings.warn("Was asked to gather along dimension 0, but all input tensors "
                              "were scalars; will instead unsqueeze and return a vector.")
                outs = [o.reshape(1) for o in outs]
            return fw.cat([o.to(target) for o in outs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outs)))
        return type(out)(map(gather_map, zip(*outs)))

    try:
        return gather_map(outputs)
    finally:
        gather_map = None


# ---- replicate --------------------------------------------------------------------------------
def _copy_to(t, device, detach):
    if detach:
        return t.detach().to(device)
    # a differentiable copy (an alias on the same device): gradients reach ``t``
    return t.to(device) if t.device != device else t.view_as(t)


def replicate(network, devices, detach=False):
    """Copies of ``network``, one per device, whose parameters are differentiable copies
    of its own (``detach=True``: detached copies). A replica has no parameters of its own
    (``parameters()`` is empty, as PyTorch's); its submodules are replicas too."""
    if not devices:
        return []
    devices = [_device(d) for d in devices]
    modules = list(network.modules())
    index = {id(m): i for i, m in enumerate(modules)}
    copies = []
    for device in devices:
        replicas = []
        for m in modules:
            r = m.__new__(type(m))
            r.__dict__ = m.__dict__.copy()
            object.__setattr__(r, "_parameters", {})
            object.__setattr__(r, "_buffers", dict(m._buffers))
            object.__setattr__(r, "_modules", dict(m._modules))
            object.__setattr__(r, "_is_replica", True)
            replicas.append(r)
        for m, r in zip(modules, replicas):
            for key, child in m._modules.items():
                r._modules[key] = None if child is None else replicas[index[id(child)]]
            for key, p in m._parameters.items():
                # a plain attribute: the replica's forward reads it, parameters() does not
                object.__setattr__(r, key, None if p is None else _copy_to(p, device, detach))
            for key, b in m._buffers.items():
                if b is not None:
                    r._buffers[key] = _copy_to(b, device, detach or not b.requires_grad)
        copies.append(replicas[0])
    return copies


# ---- parallel_apply / data_parallel -------------------------------------------------------------
def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """``[modules[i](*inputs[i], **kwargs_tup[i]) for each i]`` (an input that is not a
    tuple or list is the single argument); an exception in a replica is raised again
    naming the replica."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                             f"number of inputs {len(inputs)}")
    if kwargs_tup is None:
        kwargs_tup = ({},) * len(modules)
    elif len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                             f"number of kwargs {len(kwargs_tup)}")
    if devices is not None and len(modules) != len(devices):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                             f"number of devices {len(devices)}")
    outputs = []
    for i, (module, inp, kw) in enumerate(zip(modules, inputs, kwargs_tup)):
        if not isinstance(inp, (list, tuple)):
            inp = (inp,)
        try:
            outputs.append(module(*inp, **kw))
        except Exception as e:
            where = devices[i] if devices is not None else "the current device"
            text = (f"Caught {type(e).__name__} in replica {i} on device {where}.\n"
                    f"Original {traceback.format_exc()}")
            try:
                err = type(e)(text)
            except Exception:
                err = RuntimeError(text)
            raise err from e
    return outputs


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """Evaluates ``module(*inputs)`` in parallel across ``device_ids``: the functional
    form of ``DataParallel`` (scatter the batch, replicate, apply, gather on
    ``output_device``). Without cuda it calls the module directly, as PyTorch does."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    module_kwargs = {} if module_kwargs is None else module_kwargs
    if not fw.cuda.is_available() and device_ids is None:
        return module(*inputs, **module_kwargs)
    if device_ids is None:
        device_ids = list(range(fw.cuda.device_count()))
    if output_device is None:
        output_device = device_ids[0]
    devices = [_device(d) for d in device_ids]
    src = devices[0]
    for t in list(module.parameters()) + list(module.buffers()):
        if t.device != src:
            raise RuntimeError(f"module must have its parameters and buffers on device "
                               f"{src} (device_ids[0]) but found one of them on device: "
                               f"{t.device}")
    inputs, kwargs = scatter_kwargs(inputs, module_kwargs, devices, dim)
    if not inputs and not kwargs:
        inputs, kwargs = ((),), ({},)
    used = devices[:len(inputs)]
    if len(used) == 1:
        return module(*inputs[0], **kwargs[0])
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, inputs, kwargs, used)
    return gather(outputs, output_device, dim)

