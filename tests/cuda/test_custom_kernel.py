"""examples/custom_kernel.py: user-written Triton kernels launched on framework tensors
(the example's own checks, on small shapes, plus its argument errors)."""
import importlib.util
import os

import pytest

import framework as fw

pytestmark = pytest.mark.skipif(not fw.cuda.is_available(),
                                reason="needs cuda or TRITON_INTERPRET=1")

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "custom_kernel.py")


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("custom_kernel_example", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_checks_pass(example):
    errors = example.check(n=3000, shape=(5, 300))
    assert len(errors) == 14 and all(e >= 0 for e in errors.values())


def test_example_values(example):
    x = fw.tensor([-3.0, -1.0, 0.0, 2.0], device="cuda")
    y = fw.tensor([1.0, 0.5, 0.0, -1.0], device="cuda")
    out = example.scaled_add_leaky_relu(x, y, alpha=2.0, negative_slope=0.5)
    assert out.cpu().tolist() == [-2.5, -0.75, 0.0, 3.0]
    s = example.row_softmax(fw.zeros(3, 4, device="cuda"))
    assert s.cpu().tolist() == [[0.25] * 4] * 3
    assert example.row_softmax(fw.empty(0, 5, device="cuda")).shape == (0, 5)


def test_example_argument_errors(example):
    a = fw.ones(4, device="cuda")
    with pytest.raises(RuntimeError, match="one shape and dtype"):
        example.scaled_add_leaky_relu(a, fw.ones(5, device="cuda"))
    with pytest.raises(RuntimeError, match="cuda tensors"):
        example.scaled_add_leaky_relu(a, fw.ones(4))
    with pytest.raises(RuntimeError, match="2-D floating-point cuda tensor"):
        example.row_softmax(a)
