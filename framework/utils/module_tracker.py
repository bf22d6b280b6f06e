"""``ModuleTracker`` (PyTorch's ``torch.utils.module_tracker``): which modules are running,
forward or backward."""
import logging
import weakref

from .._tensor import Tensor
from ._pytree import tree_flatten

__all__ = ["ModuleTracker"]

logger = logging.getLogger(__name__)


class ModuleTracker:
    """A context manager that tracks the ``nn.Module`` hierarchy during execution, so that
    other code can ask which modules are running (or running their backward).

    ``parents`` is the set of the fully qualified names of the modules running now (the
    root module by its class name, its children as ``Root.child.grandchild``); it always
    holds ``"Global"``. ``is_bw`` says whether a backward pass is running."""

    def __init__(self):
        self.parents = {"Global"}
        self._known_modules = weakref.WeakKeyDictionary()
        self._seen_modules = weakref.WeakSet()
        self._bw_entered = False
        self._hooks = []

    @property
    def is_bw(self):
        """Whether this is currently running during the backward pass."""
        from ..autograd.engine import current_graph_task
        return current_graph_task() is not None

    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        mod_name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for name, submod in mod.named_children():
                self._known_modules[submod] = f"{mod_name}.{name}"
                self._get_mod_name(submod)
            self._seen_modules.add(mod)
        return mod_name

    def _append(self, name, is_bw):
        def fn(*args):
            if is_bw:
                self._bw_entered = True
            if name in self.parents:
                logger.info("The module hierarchy tracking seems to be broken as this Module "
                            "was already entered. %s during %s", name,
                            "backward" if is_bw else "forward")
            self.parents.add(name)
        return fn

    def _pop(self, name, is_bw):
        def fn(*args):
            if name in self.parents:
                self.parents.remove(name)
            else:
                logger.info("The Module hierarchy tracking is confused as we're exiting a "
                            "Module that was never entered. %s during %s", name,
                            "backward" if is_bw else "forward")
        return fn

    def _reset_after_backward(self):
        # PyTorch resets ``parents`` from an engine callback at the end of a backward that
        # entered modules; this engine has no callbacks, so the reset happens at the next
        # forward that starts outside a backward
        if self._bw_entered and not self.is_bw:
            self.parents = {"Global"}
            self._bw_entered = False

    def _fw_pre_hook(self, mod, input):
        from ..autograd.graph import register_multi_grad_hook
        self._reset_after_backward()
        name = self._get_mod_name(mod)
        self._append(name, False)()
        args, _ = tree_flatten(input)
        tensors = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._pop(name, True)))

    def _fw_post_hook(self, mod, input, output):
        from ..autograd.graph import register_multi_grad_hook
        name = self._get_mod_name(mod)
        self._pop(name, False)()
        args, _ = tree_flatten(output)
        tensors = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._append(name, True)))

    def __enter__(self):
        from ..nn.modules._hooks import (register_module_forward_hook,
                                         register_module_forward_pre_hook)
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args):
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
