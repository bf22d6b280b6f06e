"""Test configuration: every test that takes `device` runs on cpu and on cuda (a real GPU,
or Triton's interpreter when TRITON_INTERPRET=1 and the cuda backend supports it)."""
import numpy as np
import pytest

import framework as fw


def _devices():
    devs = ["cpu"]
    if fw.cuda.is_available():
        devs.append("cuda")
    return devs


@pytest.fixture(params=_devices())
def device(request):
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
