"""framework.nn.modules.utils against torch.nn.modules.utils."""
import pytest

import framework.nn.modules.utils as fu

torch = pytest.importorskip("torch")
import torch.nn.modules.utils as tu  # noqa: E402


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name", ["_single", "_pair", "_triple", "_quadruple"])
@pytest.mark.parametrize("x", [3, 2.5, None, (1, 2), [4, 5, 6], range(3), "ab"])
def test_ntuple_helpers(name, x):
    f, t = getattr(fu, name), getattr(tu, name)
    assert f(x) == t(x)
    assert f.__name__ == t.__name__ == name


def test_ntuple_factory():
    assert fu._ntuple(5)(7) == tu._ntuple(5)(7) == (7,) * 5
    assert fu._ntuple(0)(1) == tu._ntuple(0)(1)
    assert fu._ntuple(2, "p").__name__ == tu._ntuple(2, "p").__name__ == "p"
    assert fu._ntuple(3).__name__ == tu._ntuple(3).__name__


@pytest.mark.parametrize("t,n", [((1, 2), 2), ((1, 2, 3), 1), ((4,), 3), ((), 2)])
def test_reverse_repeat_tuple(t, n):
    assert fu._reverse_repeat_tuple(t, n) == tu._reverse_repeat_tuple(t, n)


@pytest.mark.parametrize("out_size,defaults", [
    ([None, 4], [1, 2, 7, 9]), ([3, None], [1, 8, 9]), ([None], [5, 6]), (7, [1, 2]),
    ([None, None], [1, 2]), ([2, 3, 4], [1, 2]),
])
def test_list_with_default(out_size, defaults):
    assert _outcome(lambda: fu._list_with_default(out_size, defaults)) == \
        _outcome(lambda: tu._list_with_default(out_size, defaults))


def test_layers_use_the_shared_helpers():
    import framework as fw
    for fm, tm in ((fw.nn.Conv2d(2, 2, 3, padding=(1, 2), padding_mode="reflect"),
                    torch.nn.Conv2d(2, 2, 3, padding=(1, 2), padding_mode="reflect")),
                   (fw.nn.Conv3d(1, 1, [1, 2, 3], stride=2),
                    torch.nn.Conv3d(1, 1, [1, 2, 3], stride=2))):
        for attr in ("kernel_size", "stride", "padding", "dilation", "output_padding",
                     "_reversed_padding_repeated_twice"):
            assert getattr(fm, attr) == getattr(tm, attr), attr
    assert fw.nn.ZeroPad2d(3).padding == torch.nn.ZeroPad2d(3).padding
    assert fw.nn.AvgPool1d(3).kernel_size == torch.nn.AvgPool1d(3).kernel_size
