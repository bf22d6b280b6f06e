"""framework.func.rearrange against PyTorch 2.13's torch.func.rearrange."""
import numpy as np
import pytest

import framework as fw
from framework.func import rearrange

torch = pytest.importorskip("torch")

X = np.arange(2 * 6 * 4, dtype=np.float32).reshape(2, 6, 4)

CASES = [
    ("a b c -> c a b", {}), ("a b c -> a b c", {}), ("a b c -> (a b) c", {}),
    ("a b c -> b (c a)", {}), ("a b c -> (a b c)", {}), ("a b c -> (c) (b a)", {}),
    ("a (b1 b2) c -> a b1 b2 c", {"b1": 2}), ("a (b1 b2) c -> (b2 a) c b1", {"b2": 2}),
    ("a (h h1) (w w1) -> a h w (h1 w1)", {"h1": 2, "w1": 2}),
    ("a (b1 b2) c -> a b1 b2 c", {"b1": 3, "b2": 2}),
    ("a b c -> a 1 b c 1", {}), ("a b c -> a () b c", {}), ("... c -> c ...", {}),
    ("a ... -> (a ...)", {}), ("... -> ...", {}), ("a ... -> ... a 1", {}),
    ("a b ... -> (b ...) a", {}), ("a b c ... -> c b a ...", {}),
]


def test_patterns_against_torch():
    for pattern, lengths in CASES:
        want = torch.func.rearrange(torch.from_numpy(X), pattern, **lengths)
        got = rearrange(fw.tensor(X), pattern, **lengths)
        assert tuple(got.shape) == tuple(want.shape), pattern
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=pattern)
    # a sequence of tensors is stacked first
    got = rearrange([fw.tensor(X[0]), fw.tensor(X[1])], "n b c -> b (n c)")
    want = torch.func.rearrange([torch.from_numpy(X[0]), torch.from_numpy(X[1])],
                                "n b c -> b (n c)")
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # an anonymous axis of size 1 on the left is reduced away (a sum, as in PyTorch)
    y = np.arange(2 * 3 * 4, dtype=np.int64).reshape(2, 3, 4)
    for x in (y[:, :1], y):
        want = torch.func.rearrange(torch.from_numpy(x), "a 1 c -> c a")
        got = rearrange(fw.tensor(x), "a 1 c -> c a")
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert str(got.dtype).endswith(str(want.dtype).rpartition(".")[2])
    # a 0-dim tensor
    assert rearrange(fw.tensor(3.0), " -> ").item() == 3.0


def test_view_and_autograd(device):
    x = fw.tensor(X, device=device, requires_grad=True)
    w = np.linspace(-1, 1, X.size, dtype=np.float32).reshape(4, 12)
    y = rearrange(x, "a b c -> c (a b)")
    assert y.device == x.device
    (y * fw.tensor(w, device=device)).sum().backward()
    t = torch.from_numpy(X).requires_grad_()
    (torch.func.rearrange(t, "a b c -> c (a b)") * torch.from_numpy(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), t.grad.numpy())
    np.testing.assert_array_equal(y.detach().cpu().numpy(),
                                  torch.func.rearrange(t, "a b c -> c (a b)").detach().numpy())
    # a grouping of adjacent dims in order is a view
    v = rearrange(x.detach(), "a b c -> (a b) c")
    assert v.data_ptr() == x.data_ptr()


ERRORS = [
    ("a b c", {}, ValueError, "Pattern must contain a single '->' separator"),
    ("a b -> a b", {}, ValueError, r"Number of dimensions in pattern \(2\) must be equal to the "
     r"number of dimensions in the tensor \(3\)"),
    ("a b c d ... -> a b c d ...", {}, ValueError, r"Number of dimensions in pattern \(4\) must "
     r"be less than or equal to the number of dimensions in the tensor \(3\)"),
    ("a b c -> a b", {}, ValueError, "Identifiers only on one side of rearrange expression"),
    ("a b b -> a b", {}, ValueError, "Indexing expression contains duplicate dimension 'b'"),
    ("a b c -> a b 2 c", {}, ValueError, "rearrange only supports unnamed axes of size 1"),
    ("a b (c -> a b c", {}, ValueError, "Imbalanced parentheses in expression: 'a b \\(c '"),
    ("a b) c -> a b c", {}, ValueError, "Brackets are not balanced"),
    ("a ((b) c) -> a b c", {}, ValueError, "Axis composition is one-level"),
    ("a b c -> a b c", {"b": 3.0}, TypeError, "rearrange axis lengths must be integers, got: "
     "<class 'float'>"),
    ("(a ...) b c -> a b c", {}, ValueError, "Ellipsis is parenthesis in the left side is not "
     "allowed"),
    ("a b c -> ... a b c", {}, ValueError, "Ellipsis found in right side, but not left side"),
    ("a b c -> a b c$", {}, ValueError, "Unknown character '\\$'"),
    ("a _b c -> a _b c", {}, ValueError, "Invalid axis identifier: _b\naxis name should should "
     "not start or end with underscore"),
    ("a.b c -> a c", {}, ValueError, r"Expression may contain dots only inside ellipsis \(...\)"),
    ("a b c -> a b c", {"d": 4}, ValueError, "Identifiers not found in rearrange expression: "
     "{'d'}"),
    ("a (b1 b2) c -> a b1 b2 c", {"b1": 4}, "DimensionBindError",
     r"inferred dimension does not evenly fit into larger dimension: 6 vs \(4, '\?'\)"),
    ("a (b1 b2) c -> a b1 b2 c", {}, "DimensionBindError",
     "cannot infer the sizes of two dimensions at once d1 and d2"),
    ("a b c -> a b c", {"b": 4}, "DimensionBindError",
     r"Dimension sizes to do not match \(6 != 4\) when matching dimension pack \(d1,\)"),
    ("a (b c) d -> a b c d", {"b": 2, "c": 2}, "DimensionBindError",
     r"Dimension sizes to do not match \(6 != 4\) when matching dimension pack \(d1, d2\)"),
]


def test_errors_match_torch():
    for pattern, lengths, exc, msg in ERRORS:
        for lib, fn in ((fw, rearrange), (torch, torch.func.rearrange)):
            x = lib.ones(2, 6, 4)
            with pytest.raises(Exception, match=msg) as info:
                fn(x, pattern, **lengths)
            if isinstance(exc, str):
                assert type(info.value).__name__ == exc, (pattern, info.value)
            else:
                assert type(info.value) is exc, (pattern, info.value)
