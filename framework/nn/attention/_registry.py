"""The registry of flash attention implementations (torch.nn.attention's): providers
register a function that installs their kernels; users activate one by name. None is
registered by default here: the framework's own flash kernel is the default."""
import logging

logger = logging.getLogger(__name__)

_IMPLS = {}
_ACTIVE = None   # (name, handle) of the activated impl, or None for the default


def register_flash_attention_impl(impl, *, register_fn):
    """Registers ``register_fn``, called by :func:`activate_flash_attention_impl` to install
    the implementation ``impl``; it may return a handle with a ``remove()`` method."""
    _IMPLS[impl] = register_fn


def activate_flash_attention_impl(impl):
    """Activates the registered flash attention implementation ``impl`` (restoring the
    default first)."""
    global _ACTIVE
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _IMPLS.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _ACTIVE = (impl, handle)


def list_flash_attention_impls():
    """Return the names of all available flash attention implementations."""
    return sorted(_IMPLS)


def current_flash_attention_impl():
    """The name of the activated flash attention implementation; None for the default."""
    return None if _ACTIVE is None else _ACTIVE[0]


def restore_flash_attention_impl(_raise_warn=True):
    """Restores the default flash attention implementation."""
    global _ACTIVE
    handle = None if _ACTIVE is None else _ACTIVE[1]
    if handle is not None:
        handle.remove()
    elif _raise_warn:
        logger.warning("Trying to restore default FA2 impl when no custom impl was activated")
    _ACTIVE = None
