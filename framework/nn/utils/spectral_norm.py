"""Spectral normalisation through a forward pre-hook (PyTorch's
``torch.nn.utils.spectral_norm`` API: ``weight_orig`` parameter, ``weight_u``/``weight_v``
buffers, one power iteration per training forward)."""
import framework as _fw

from ..parameter import Parameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


def _normalize(x, eps):
    """x / max(||x||_2, eps) for a vector."""
    return x / _fw.linalg.vector_norm(x).clamp(min=eps)


class SpectralNorm:
    """The forward pre-hook that sets ``module.<name> = <name>_orig / sigma``, sigma the
    largest singular value estimated by power iteration."""
    # version 1: weight_v is saved in the state dict (version None checkpoints lack it)
    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        mat = weight
        if self.dim != 0:
            mat = mat.permute(self.dim, *[d for d in range(mat.dim()) if d != self.dim])
        return mat.reshape(mat.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with _fw.no_grad():
                # updated in place: the buffers carry the estimate across forwards
                for _ in range(self.n_power_iterations):
                    v.copy_(_normalize(_fw.mv(mat.t(), u), self.eps))
                    u.copy_(_normalize(_fw.mv(mat, v), self.eps))
                # clones, so that the in-place updates of the next forward do not touch
                # tensors this forward's graph saved
                u = u.clone()
                v = v.clone()
        sigma = _fw.dot(u, _fw.mv(mat, v))
        return weight / sigma

    def remove(self, module):
        with _fw.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module,
                                                       do_power_iteration=module.training))

    def _solve_v_and_rescale(self, mat, u, target_sigma):
        # v with u^T W v = target_sigma, for checkpoints saved without weight_v
        v = _fw.linalg.multi_dot([mat.t().mm(mat).pinverse(), mat.t(),
                                  u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / _fw.dot(u, _fw.mv(mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError("Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with _fw.no_grad():
            mat = fn.reshape_weight_to_matrix(weight)
            h, w = tuple(mat.shape)
            u = _normalize(weight.new_empty(h).normal_(0, 1), fn.eps)
            v = _normalize(weight.new_empty(w).normal_(0, 1), fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute until the first forward recomputes it
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts state dicts saved before version 1 (``weight`` present, ``weight_v``
    absent) by solving for ``weight_v``."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if version is None and weight_key not in state_dict and \
                all(weight_key + s in state_dict for s in ("_orig", "_u", "_v")):
            return
        has_missing = False
        for suffix in ("_orig", "", "_u"):
            if weight_key + suffix not in state_dict:
                has_missing = True
                if strict:
                    missing_keys.append(weight_key + suffix)
        if has_missing:
            return
        with _fw.no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(mat, u, sigma)


class SpectralNormStateDictHook:
    """Records the spectral-norm version in the state dict's metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        meta = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in meta:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        meta[key] = self.fn._version


def _conv_transpose_types():
    from .. import modules
    return tuple(getattr(modules, n) for n in ("ConvTranspose1d", "ConvTranspose2d",
                                                "ConvTranspose3d") if hasattr(modules, n))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    r"""Apply spectral normalization to a parameter in the given module:
    ``W = W_orig / sigma(W_orig)``, sigma estimated by ``n_power_iterations`` steps of
    power iteration per training forward. ``dim`` defaults to 0 (1 for ConvTranspose)."""
    if dim is None:
        dim = 1 if isinstance(module, _conv_transpose_types()) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def _unwrap(hook):
    # load-state-dict pre-hooks are stored wrapped (module.py's _WrappedHook)
    return getattr(hook, "hook", hook)


def remove_spectral_norm(module, name="weight"):
    r"""Remove the spectral normalization reparameterization from a module."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for k, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    for k, hook in module._load_state_dict_pre_hooks.items():
        if isinstance(_unwrap(hook), SpectralNormLoadStateDictPreHook) and \
                _unwrap(hook).fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
