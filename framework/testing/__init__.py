"""``framework.testing``: torch.testing's public API (``assert_close``, the deprecated
``assert_allclose``, ``make_tensor``). torch's ``FileCheck`` (a checker of TorchScript IR
text) has no counterpart here: the framework has no TorchScript."""
from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
