"""The model zoo of research code, run unchanged under the framework and under PyTorch.

Each workload (tests/scripts/models_*.py) is an architecture written the way its reference
repository writes it, shrunk to tiny sizes: the same weights in both libraries, then the
forward outputs, the gradient of the loss for every parameter, and two optimizer steps are
compared.
"""
import numpy as np
import pytest

import framework
import models_clip_gpt_mamba as training
import models_convnets as convnets
import models_transformers as transformers
from script_harness import compare


def _on(device):
    """The framework side runs on ``device``; PyTorch (a CPU build) stays on cpu."""
    return lambda torch: "cpu" if torch is not framework else device


@pytest.mark.parametrize("bottleneck", [False, True])
def test_resnet(bottleneck):
    compare(convnets.resnet, bottleneck, zero_init_residual=bottleneck, rtol=1e-3, atol=1e-4)


def test_resnet_autocast_bfloat16():
    """nn.Conv2d runs in bfloat16 under cpu autocast (it captured F.conv2d before autocast
    wrapped it)."""
    compare(convnets.resnet, False, zero_init_residual=False, amp=True, rtol=5e-2, atol=1e-2)


def test_mobilenet_v2():
    compare(convnets.mobilenet_v2, rtol=1e-3, atol=1e-4)


def test_squeeze_excitation():
    compare(convnets.squeeze_excitation, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("train", [False, True])
def test_convnext(train):
    compare(convnets.convnext, drop_path_rate=0.4 if train else 0.0, train_drop_path=train,
            rtol=1e-3, atol=1e-4)


def test_drop_path_bernoulli():
    compare(convnets.drop_path_bernoulli)


@pytest.mark.parametrize("fused_attn", [True, False])
def test_vit(fused_attn):
    compare(transformers.vit, fused_attn, rtol=1e-3, atol=1e-4)


def test_llama():
    compare(transformers.llama, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("dispatch", ["one_hot", "nonzero"])
def test_moe(dispatch):
    compare(transformers.moe, dispatch, rtol=1e-3, atol=1e-4)


def test_clip(device):
    compare(training.clip, device=_on(device), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("flash", [True, False])
def test_nanogpt(flash):
    compare(training.nanogpt, False, flash=flash, rtol=1e-3, atol=1e-4)


def test_nanogpt_autocast_bfloat16():
    compare(training.nanogpt, True, rtol=1e-2, atol=2e-3)


@pytest.mark.parametrize("causal_pad", [True, False])
def test_mamba(causal_pad):
    compare(training.mamba, causal_pad, rtol=1e-3, atol=1e-4)


def test_mamba_autocast_bfloat16():
    """Under cpu autocast PyTorch's einsum is bfloat16 where it contracts (its bmm) and
    promotes where it only multiplies: ``einsum('bld,dn->bldn', bf16, fp32)`` runs."""
    compare(training.mamba, True, amp=True, rtol=1e-2, atol=2e-3)


def test_contractions_under_cpu_autocast():
    torch = pytest.importorskip("torch")
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    cases = [("tensordot", lambda t, x, y: t.tensordot(x, y, dims=1)),
             ("ij,jk->ik", lambda t, x, y: t.einsum("ij,jk->ik", x, y)),
             ("ij,jk", lambda t, x, y: t.einsum("ij,jk", [x, y])),
             ("ij,kl->ijkl", lambda t, x, y: t.einsum("ij,kl->ijkl", x, y)),
             ("ij,jk->ijk", lambda t, x, y: t.einsum("ij,jk->ijk", x, y.bfloat16()))]
    for name, fn in cases:
        got, want = [], []
        for t, out in ((framework, got), (torch, want)):
            with t.autocast(device_type="cpu", dtype=t.bfloat16):
                r = fn(t, t.tensor(a, dtype=t.float32), t.tensor(b, dtype=t.float32))
            out += [str(r.dtype).rpartition(".")[2], r.float().sum().item()]
        assert got == want, name


def test_split_method_keywords():
    """``Tensor.split`` names its size ``split_size`` (``torch.split``:
    ``split_size_or_sections``), as Mamba's ``x.split(split_size=[a, b], dim=-1)`` needs."""
    x = framework.arange(6.0)
    assert [t.tolist() for t in x.split(split_size=[2, 4], dim=-1)] == [[0, 1], [2, 3, 4, 5]]
    assert len(framework.split(x, split_size_or_sections=3)) == 2
    with pytest.raises(TypeError, match=r"Tensor.split\(\) got an unexpected keyword "
                                        r"argument 'split_size_or_sections'"):
        x.split(split_size_or_sections=2)
