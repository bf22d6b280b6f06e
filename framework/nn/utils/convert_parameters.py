"""Flattening parameters to one vector and back (PyTorch's
``torch.nn.utils.convert_parameters``)."""
import framework as _fw

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_device):
    # Device index for cuda tensors, -1 for the cpu, as torch compares them
    here = param.get_device() if param.device.type == "cuda" else -1
    if old_device is None:
        return here
    if here != old_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_device


def parameters_to_vector(parameters):
    r"""Flatten an iterable of parameters into a single vector."""
    device = None
    vec = []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.view(-1))
    return _fw.cat(vec)


def vector_to_parameters(vec, parameters):
    r"""Copy slices of a vector into an iterable of parameters (replacing their ``.data``)."""
    if not isinstance(vec, _fw.Tensor):
        cls = type(vec)
        name = cls.__qualname__ if cls.__module__ == "builtins" else \
            f"{cls.__module__}.{cls.__qualname__}"
        raise TypeError(f"expected torch.Tensor, but got: {name}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
