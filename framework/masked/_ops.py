"""``framework.masked._ops`` (PyTorch's ``torch.masked._ops``): the module path of the masked
reductions and normalizations, which are the functions of ``framework.masked``."""
import framework.masked as _masked

_NAMES = ("amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
          "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
          "std", "sum", "var")


def __getattr__(name):
    # looked up at call time: the public binding (a dispatching wrapper once
    # __torch_function__ is on) is framework.masked's
    if name in _NAMES:
        return getattr(_masked, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(_NAMES)
