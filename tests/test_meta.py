"""The meta device: results carry shape, dtype and device through ops, modules and backward
(no data), and ops whose output shape depends on data raise, as in PyTorch."""
import pytest

import framework


def _cases(torch):
    nn, F = torch.nn, torch.nn.functional

    def m(*s, **k):
        return torch.randn(*s, device="meta", **k)

    def backward():
        w = torch.randn(3, 4, device="meta", requires_grad=True)
        (m(2, 3) @ w).sum().backward()
        return w.grad

    def built_under_device():
        with torch.device("meta"):
            model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 2))
            return model(torch.randn(3, 4))

    return {
        "exp": lambda: m(3).exp(),
        "add_broadcast": lambda: m(2, 1) + m(3),
        "matmul": lambda: m(2, 3) @ m(3, 4),
        "sum": lambda: m(2, 3).sum(1),
        "mean_keepdim": lambda: m(2, 3).mean(-1, keepdim=True),
        "softmax": lambda: F.softmax(m(2, 3), -1),
        "linear": lambda: nn.Linear(4, 5, device="meta")(m(2, 4)),
        "conv2d": lambda: nn.Conv2d(3, 4, 3, device="meta")(m(1, 3, 8, 8)),
        "cat": lambda: torch.cat([m(2, 3), m(1, 3)]),
        "index": lambda: m(5, 3)[torch.tensor([0, 2], device="meta")],
        "argmax": lambda: m(5, 3).argmax(1),
        "to_half": lambda: m(2).to(torch.float16),
        "sdpa": lambda: F.scaled_dot_product_attention(m(1, 2, 4, 8), m(1, 2, 4, 8),
                                                       m(1, 2, 4, 8), is_causal=True),
        "embedding": lambda: nn.Embedding(10, 4, device="meta")(
            torch.zeros(3, dtype=torch.long, device="meta")),
        "cross_entropy": lambda: F.cross_entropy(m(4, 5),
                                                 torch.zeros(4, dtype=torch.long, device="meta")),
        "topk": lambda: m(5).topk(2),
        "cumsum": lambda: m(5).cumsum(0),
        "where": lambda: torch.where(m(3) > 0, m(3), m(3)),
        "contiguous": lambda: m(2, 3).t().contiguous(),
        "repeat_interleave": lambda: m(3).repeat_interleave(2),
        "backward": backward,
        "built_under_device": built_under_device,
        "repr": lambda: repr(m(2) * 2),
        # data-dependent shapes or host reads: errors in both
        "nonzero": lambda: m(3).nonzero(),
        "bool_mask": lambda: m(3)[m(3) > 0],
        "unique": lambda: torch.unique(m(3)),
        "tolist": lambda: m(2).tolist(),
        "mixed_devices": lambda: m(3) + torch.randn(3),
    }


def _describe(r):
    if isinstance(r, tuple):
        return [_describe(x) for x in r]
    if hasattr(r, "shape"):
        return (tuple(r.shape), str(r.dtype).split(".")[-1], str(r.device), r.is_meta)
    return str(r).replace("framework.", "torch.")


@pytest.mark.parametrize("case", list(_cases(framework)))
def test_meta_device_as_pytorch(case):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (framework, torch):
        try:
            results.append(_describe(_cases(lib)[case]()))
        except (RuntimeError, NotImplementedError):
            results.append("raises")
    assert results[0] == results[1]
