"""Small API pieces of autograd, func, backends.cuda, nn.attention, cuda and profiler,
checked against PyTorch."""
import logging

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")


def test_autograd_engine_flags():
    A, TA = fw.autograd, torch.autograd
    assert A.is_multithreading_enabled() == TA.is_multithreading_enabled()
    assert A.is_view_replay_enabled() == TA.is_view_replay_enabled()
    with A.set_multithreading_enabled(False):
        assert not A.is_multithreading_enabled()
    assert A.is_multithreading_enabled()
    A.set_multithreading_enabled(False)   # as a function call, like torch's
    assert not A.is_multithreading_enabled()
    A.set_multithreading_enabled(True)

    try:
        # as in torch, constructing the decorator sets the mode (until the call returns)
        @A.set_multithreading_enabled(False)
        def inner():
            return A.is_multithreading_enabled()

        @TA.set_multithreading_enabled(False)
        def tinner():
            return TA.is_multithreading_enabled()
        assert inner() is tinner() is False
        assert A.is_multithreading_enabled() == TA.is_multithreading_enabled()
    finally:
        A.set_multithreading_enabled(True)
        TA.set_multithreading_enabled(True)
    with A.enforce_grad_layout_policy(False):
        assert not A.engine_flags.is_grad_layout_policy_enforced()
    assert A.engine_flags.is_grad_layout_policy_enforced()
    with pytest.raises(RuntimeError) as want:
        TA.variable(torch.ones(2))
    with pytest.raises(RuntimeError) as got:
        A.variable(fw.ones(2))
    assert str(got.value) == str(want.value)
    assert A.SavedTensor is A.graph.SavedTensor


def test_functionalize_keeps_results_and_input_mutations():
    def f(x):
        x.add_(1)
        return x * 2
    x, tx = fw.zeros(3), torch.zeros(3)
    got = fw.func.functionalize(f)(x)
    want = torch.func.functionalize(f)(tx)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
    fw.func.functionalize(f, remove="mutations_and_views")
    with pytest.raises(RuntimeError) as want:
        torch.func.functionalize(f, remove="foo")
    with pytest.raises(RuntimeError) as got:
        fw.func.functionalize(f, remove="foo")
    assert str(got.value) == str(want.value)


def test_linearize_matches_torch():
    def f(x, y):
        return (x.sin() * y).sum(0)
    x, y = np.random.randn(3, 2), np.random.randn(3, 2)
    tx, ty = np.random.randn(3, 2), np.random.randn(3, 2)
    out, jfn = fw.func.linearize(f, fw.tensor(x), fw.tensor(y))
    tout, tjfn = torch.func.linearize(f, torch.from_numpy(x), torch.from_numpy(y))
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-12)
    np.testing.assert_allclose(jfn(fw.tensor(tx), fw.tensor(ty)).numpy(),
                               tjfn(torch.from_numpy(tx), torch.from_numpy(ty)).numpy(),
                               rtol=1e-10)
    _, jsin = fw.func.linearize(fw.sin, fw.zeros(3))
    _, tjsin = torch.func.linearize(torch.sin, torch.zeros(3))
    for bad, tbad in [((fw.ones(4),), (torch.ones(4),)),
                      ((fw.ones(3, dtype=fw.float64),), (torch.ones(3, dtype=torch.float64),)),
                      ((fw.ones(3), fw.ones(3)), (torch.ones(3), torch.ones(3)))]:
        with pytest.raises(RuntimeError) as want:
            tjsin(*tbad)
        with pytest.raises(RuntimeError) as got:
            jsin(*bad)
        assert str(got.value).replace("framework", "torch") == str(want.value)


def test_replace_all_batch_norm_modules_and_debug_unwrap():
    m = fw.nn.Sequential(fw.nn.Linear(3, 3), fw.nn.BatchNorm1d(3))
    assert fw.func.replace_all_batch_norm_modules_(m) is m
    bn = m[1]
    assert bn.running_mean is None and bn.running_var is None
    assert not bn.track_running_stats and bn.num_batches_tracked is None
    x = np.random.randn(4, 3)
    m.eval()   # without running stats eval mode still uses the batch's statistics
    tm = torch.nn.BatchNorm1d(3)
    torch.func.replace_all_batch_norm_modules_(tm)
    tm.eval()
    np.testing.assert_allclose(bn(fw.tensor(x, dtype=fw.float32)).detach().numpy(),
                               tm(torch.from_numpy(x).float()).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    t = fw.ones(2)
    assert fw.func.debug_unwrap(t) is t


def test_sdpa_params_and_can_use(device):
    B = fw.backends.cuda
    q = fw.randn(1, 2, 4, 8, device=device)
    p = B.SDPAParams(q, q, q, None, 0.0, False, False)
    assert (p.query is q and p.attn_mask is None and p.dropout == 0.0 and not p.is_causal
            and not p.enable_gqa)
    on_cuda = device == "cuda"
    for fn in (B.can_use_flash_attention, B.can_use_efficient_attention,
               B.can_use_cudnn_attention):
        assert fn(p) is on_cuda
    assert fw.nn.attention.SDPAParams is B.SDPAParams
    assert fw.nn.attention.can_use_flash_attention is B.can_use_flash_attention
    if on_cuda:
        with fw.nn.attention.sdpa_kernel(fw.nn.attention.SDPBackend.MATH):
            with pytest.warns(UserWarning, match="runtime disabled"):
                assert not B.can_use_flash_attention(p, debug=True)
        assert B.can_use_flash_attention(p)
        qi = fw.ones(1, 2, 4, 8, device=device, dtype=fw.int32)
        assert not B.can_use_efficient_attention(B.SDPAParams(qi, qi, qi, None, 0.0, False,
                                                              False))
    # torch's CPU build answers False for CPU tensors too
    tq = torch.randn(1, 2, 4, 8)
    assert not torch.backends.cuda.can_use_flash_attention(
        torch.backends.cuda.SDPAParams(tq, tq, tq, None, 0.0, False, False))


def test_backends_cuda_preferences_and_plan_cache():
    B, TB = fw.backends.cuda, torch.backends.cuda
    assert repr(B.preferred_blas_library()) == repr(TB.preferred_blas_library())
    try:
        assert str(B.preferred_blas_library("cublaslt")) == "_BlasBackend.Cublaslt"
        assert B.preferred_blas_library() is B._BlasBackend.Cublaslt
        assert B.preferred_blas_library(B._BlasBackend.Ck) is B._BlasBackend.Ck
    finally:
        B.preferred_blas_library("cublas")
    assert repr(B.preferred_linalg_library()) == repr(TB.preferred_linalg_library())
    assert repr(B.preferred_rocm_fa_library()) == repr(TB.preferred_rocm_fa_library())
    for f, tf in [(B.preferred_blas_library, TB.preferred_blas_library),
                  (B.preferred_linalg_library, TB.preferred_linalg_library),
                  (B.preferred_rocm_fa_library, TB.preferred_rocm_fa_library)]:
        for bad in ("foo", 3):
            with pytest.raises((RuntimeError, ValueError)) as want:
                tf(bad)
            with pytest.raises(type(want.value)) as got:
                f(bad)
            assert str(got.value) == str(want.value)
    assert B.fp16_bf16_reduction_math_sdp_allowed() == TB.fp16_bf16_reduction_math_sdp_allowed()
    B.allow_fp16_bf16_reduction_math_sdp(True)
    assert B.fp16_bf16_reduction_math_sdp_allowed()
    B.allow_fp16_bf16_reduction_math_sdp(False)
    assert B.is_ck_sdpa_available() is False
    if fw.cuda.is_available():
        cache = B.cufft_plan_cache
        assert cache.size == 0 and cache[0].max_size == cache.max_size
        old = cache.max_size
        cache.max_size = 7
        assert cache[0].max_size == 7
        cache.max_size = old
        with pytest.raises(RuntimeError, match="read-only property"):
            cache.size = 3
        with pytest.raises(RuntimeError, match="expected 0 <= device index"):
            cache[99]
        cache.clear()


def test_flash_attention_impl_registry(caplog):
    A = fw.nn.attention
    assert A.current_flash_attention_impl() is None
    removed = []

    class Handle:
        def remove(self):
            removed.append(True)
    A.register_flash_attention_impl("TestImpl", register_fn=Handle)
    try:
        assert "TestImpl" in A.list_flash_attention_impls()
        A.activate_flash_attention_impl("TestImpl")
        assert A.current_flash_attention_impl() == "TestImpl"
        A.restore_flash_attention_impl()
        assert removed == [True] and A.current_flash_attention_impl() is None
        with caplog.at_level(logging.WARNING):
            A.restore_flash_attention_impl()
        assert "no custom impl was activated" in caplog.text
        with pytest.raises(ValueError, match="Unknown flash attention impl 'nope'"):
            A.activate_flash_attention_impl("nope")
    finally:
        A._registry._IMPLS.pop("TestImpl", None)


def test_cuda_error_helpers_and_storages():
    C = fw.cuda
    C.check_error(C.cudaStatus.SUCCESS)
    assert (C.cudaStatus.SUCCESS, C.cudaStatus.ERROR_NOT_READY) == (
        torch.cuda.cudaStatus.SUCCESS, torch.cuda.cudaStatus.ERROR_NOT_READY)
    with pytest.raises(C.CudaError, match=r"^out of memory \(2\)$"):
        C.check_error(2)
    assert issubclass(C.CudaError, RuntimeError)
    assert fw.AcceleratorError is C.AcceleratorError
    assert issubclass(fw.AcceleratorError, RuntimeError)
    assert C.get_allocator_backend() == "native"
    assert isinstance(C.get_gencode_flags(), str)
    with pytest.raises(RuntimeError, match="cuBLAS"):
        C.current_blas_handle()
    if C.is_available():
        s = C.FloatStorage(3)
        assert s.device.type == "cuda" and isinstance(s, C.FloatStorage)
        assert not isinstance(s, fw.FloatStorage) and not isinstance(fw.FloatStorage(3),
                                                                     C.FloatStorage)


def test_profiler_pieces():
    P = fw.profiler
    assert P.RecordScope.USER_SCOPE == int(torch.profiler.RecordScope.USER_SCOPE)
    assert list(P.RecordScope.__members__) == list(torch.profiler.RecordScope.__members__)
    assert P.kineto_available() is False
    seen = []
    h = P.register_optimizer_step_post_hook(lambda opt, args, kwargs: seen.append(opt))
    try:
        w = fw.nn.Parameter(fw.ones(2))
        opt = fw.optim.SGD([w], lr=0.1)
        w.grad = fw.ones(2)
        opt.step()
        assert seen == [opt]
    finally:
        h.remove()
    opt.step()
    assert len(seen) == 1
