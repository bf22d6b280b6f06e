"""``Stateful`` (PyTorch's ``torch.distributed.checkpoint.stateful``): a top-level value of
the state dict given to ``save``/``load`` that has ``state_dict()`` and
``load_state_dict()`` (a module, an optimizer, an application's state) is saved as its
``state_dict()`` and loaded back through its ``load_state_dict``."""
from typing import Any, Dict, Protocol, runtime_checkable

__all__ = ["Stateful"]


@runtime_checkable
class Stateful(Protocol):
    def state_dict(self) -> Dict[str, Any]:
        ...

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        ...


def _to_state_dict(state_dict):
    """``state_dict`` with its Stateful values replaced by their ``state_dict()``."""
    return {k: v.state_dict() if isinstance(v, Stateful) else v for k, v in state_dict.items()}
