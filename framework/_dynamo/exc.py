"""``framework._dynamo.exc``: the exceptions PyTorch's compiler raises that scripts catch.

``Unsupported`` is what ``framework.compile(..., fullgraph=True)`` raises for code it cannot
trace into one graph (where PyTorch would break the graph). It is also the framework's
``fx.TraceError``, which names the construct that could not be traced."""
from ..fx.proxy import TraceError


class TorchDynamoException(RuntimeError):
    """Base of the compiler's exceptions."""


class Unsupported(TorchDynamoException, TraceError):
    """The compiler cannot trace this code into one graph."""


class UserError(TorchDynamoException):
    """The compiler rejects the user's code (data-dependent branching, bad arguments)."""

    def __init__(self, error_type=None, msg="", case_name=None):
        super().__init__(msg)
        self.error_type = error_type
        self.message = msg
        self.case_name = case_name
