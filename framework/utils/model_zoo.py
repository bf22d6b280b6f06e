"""``framework.utils.model_zoo``: PyTorch's old home of ``load_url``
(``framework.hub.load_state_dict_from_url``)."""
from ..hub import load_state_dict_from_url as load_url  # noqa: F401

__all__ = ["load_url"]
