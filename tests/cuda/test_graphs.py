"""framework.cuda graphs (torch.cuda.graphs): capture, replay, private memory pools,
make_graphed_callables. On the simulated device capture records the launches and replay
runs them again; results are compared with eager runs of the same ops (float64, exact)."""
import contextlib
import copy
import ctypes
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn as nn

pytestmark = pytest.mark.skipif(not fw.cuda.is_available(),
                                reason="needs cuda or TRITON_INTERPRET=1")

N = 1500   # more than one program block of the pointwise kernels


def _randn(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return fw.from_numpy(rng.standard_normal(shape)).to("cuda")


def _chain(x):
    return (x * 2.0).sin() + x.exp() * 0.5 - x


def test_pointwise_chain_replay():
    x = _randn(N)
    _chain(x)   # warmup
    g = fw.cuda.CUDAGraph()
    with fw.cuda.graph(g):
        y = _chain(x)
    for seed in (1, 2):
        new = _randn(N, seed=seed)
        x.copy_(new)
        g.replay()
        assert np.array_equal(y.cpu().numpy(), _chain(new).cpu().numpy())
    ref = _chain(x).cpu().numpy()
    x.fill_(0.25)            # capture did not run the work: replay does, on the new data
    g.replay()
    assert np.array_equal(y.cpu().numpy(), _chain(fw.full((N,), 0.25, dtype=fw.float64,
                                                          device="cuda")).cpu().numpy())
    assert not np.array_equal(y.cpu().numpy(), ref)


def test_eager_ops_after_capture_do_not_see_unreplayed_work():
    # a device constant made during capture (a cached scalar operand) is filled only when
    # the graph replays: eager code must not be handed it before
    x = _randn(N)
    g = fw.cuda.CUDAGraph()
    with fw.cuda.graph(g):
        x * 0.8125 + 0.1875
    np.testing.assert_array_equal((x * 0.8125 + 0.1875).cpu().numpy(),
                                  x.cpu().numpy() * 0.8125 + 0.1875)


def test_replay_writes_the_captured_addresses():
    x = _randn(N)
    g = fw.cuda.CUDAGraph()
    with fw.cuda.graph(g):
        y = x + 1
    alias = y.detach()                  # the captured memory
    y.data = fw.zeros(N, dtype=fw.float64, device="cuda")   # y now names other memory
    g.replay()
    np.testing.assert_array_equal(alias.cpu().numpy(), x.cpu().numpy() + 1)
    assert not y.cpu().numpy().any()


def test_user_triton_kernel_is_captured():
    import triton
    import triton.language as tl

    @triton.jit
    def axpy(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, 3.0 * tl.load(x_ptr + offs, mask=mask)
                 + tl.load(y_ptr + offs, mask=mask), mask=mask)

    x, y = _randn(N), _randn(N, seed=1)
    out = fw.empty_like(x)
    axpy[(triton.cdiv(N, 1024),)](x, y, out, N, BLOCK=1024)   # compiled before capture
    g = fw.cuda.CUDAGraph()
    with fw.cuda.graph(g):
        axpy[(triton.cdiv(N, 1024),)](x, y, out, N, BLOCK=1024)
    x.copy_(_randn(N, seed=2))
    g.replay()
    np.testing.assert_array_equal(out.cpu().numpy(), 3.0 * x.cpu().numpy() + y.cpu().numpy())


def _make_net(seed):
    fw.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).to(
        device="cuda", dtype=fw.float64)


def _train_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


def test_whole_network_capture_with_optimizer():
    graphed, eager = _make_net(0), _make_net(0)
    opts = [fw.optim.Adam(m.parameters(), lr=0.05, capturable=True) for m in (graphed, eager)]
    data = [(_randn(5, 6, seed=10 + i), _randn(5, 3, seed=20 + i)) for i in range(5)]
    static_x, static_y = data[0][0].clone(), data[0][1].clone()
    s = fw.cuda.Stream()                          # warmup on a side stream, as in PyTorch
    s.wait_stream(fw.cuda.current_stream())
    with fw.cuda.stream(s):
        for _ in range(2):
            _train_step(graphed, opts[0], static_x, static_y)
    fw.cuda.current_stream().wait_stream(s)
    for _ in range(2):
        _train_step(eager, opts[1], *data[0])

    g = fw.cuda.CUDAGraph()
    with fw.cuda.graph(g):
        static_loss = _train_step(graphed, opts[0], static_x, static_y)
    for x, y in data[1:]:
        static_x.copy_(x)
        static_y.copy_(y)
        g.replay()
        loss = _train_step(eager, opts[1], x, y)
        assert static_loss.item() == loss.item()
    for p, q in zip(graphed.parameters(), eager.parameters()):
        assert np.array_equal(p.detach().cpu().numpy(), q.detach().cpu().numpy())
        assert np.array_equal(p.grad.cpu().numpy(), q.grad.cpu().numpy())


def test_make_graphed_callables_mlp_and_function():
    model = _make_net(1)
    eager = copy.deepcopy(model)

    def fn(a, b):
        return (a * b).tanh(), a - b

    sample = _randn(4, 6, seed=3).requires_grad_()
    fa, fb = (_randn(4, 3, seed=s).requires_grad_() for s in (4, 5))
    gmodel, gfn = fw.cuda.make_graphed_callables((model, fn), ((sample,), (fa, fb)),
                                                 num_warmup_iters=1)
    assert gmodel is model
    for step in range(2):
        x = _randn(4, 6, seed=6 + step).requires_grad_()
        xe = x.detach().clone().requires_grad_()
        out, oute = gmodel(x), eager(xe)
        assert np.array_equal(out.detach().cpu().numpy(), oute.detach().cpu().numpy())
        w = _randn(4, 3, seed=8 + step)
        (out * w).sum().backward()
        (oute * w).sum().backward()
        assert np.array_equal(x.grad.cpu().numpy(), xe.grad.cpu().numpy())
        for p, q in zip(model.parameters(), eager.parameters()):  # accumulated twice
            assert np.array_equal(p.grad.cpu().numpy(), q.grad.cpu().numpy())

    a, b = (_randn(4, 3, seed=s).requires_grad_() for s in (11, 12))
    ae, be = (t.detach().clone().requires_grad_() for t in (a, b))
    (u, v), (ue, ve) = gfn(a, b), fn(ae, be)
    assert np.array_equal(u.detach().cpu().numpy(), ue.detach().cpu().numpy())
    assert np.array_equal(v.detach().cpu().numpy(), ve.detach().cpu().numpy())
    (u.sum() + (v * v).sum()).backward()
    (ue.sum() + (ve * ve).sum()).backward()
    assert np.array_equal(a.grad.cpu().numpy(), ae.grad.cpu().numpy())
    assert np.array_equal(b.grad.cpu().numpy(), be.grad.cpu().numpy())

    model.eval()     # another training state than captured: the eager forward runs
    x = _randn(4, 6, seed=13)
    assert np.array_equal(model(x).detach().cpu().numpy(), eager(x).detach().cpu().numpy())


def test_warmup_backward_reads_no_uninitialized_memory(monkeypatch):
    # memory fresh from the allocator may hold anything: here every empty_like is filled
    # with huge values, and a warm-up backward that summed them would overflow (a numpy
    # RuntimeWarning in the simulator, an error below)
    plain = fw.empty_like

    def poisoned(t, **kw):
        return plain(t, **kw).fill_(3e38)
    monkeypatch.setattr(fw, "empty_like", poisoned)
    model = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3)).to("cuda")
    eager = copy.deepcopy(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        graphed = fw.cuda.make_graphed_callables(model, (_randn(4, 5, seed=1).float(),))
        x = _randn(4, 5, seed=2).float()
        graphed(x).sum().backward()
    eager(x).sum().backward()
    for p, q in zip(model.parameters(), eager.parameters()):
        assert np.array_equal(p.grad.cpu().numpy(), q.grad.cpu().numpy())


def test_synchronizing_calls_during_capture_raise():
    x = _randn(N)
    g = fw.cuda.CUDAGraph()
    with fw.cuda.graph(g):
        y = x + 1
        with pytest.raises(RuntimeError, match="operation not permitted when stream is "
                                               "capturing"):
            y.sum().item()
        with pytest.raises(RuntimeError, match="operation not permitted"):
            y.cpu()
        with pytest.raises(RuntimeError, match="operation not permitted"):
            fw.cuda.synchronize()
        with pytest.raises(RuntimeError, match="operation not permitted"):
            fw.cuda.current_stream().synchronize()
        with pytest.raises(RuntimeError, match="operation not permitted"):
            fw.ones(3).to("cuda")
    g.replay()
    assert y.sum().item() == pytest.approx(float((x.cpu().numpy() + 1).sum()))


def test_capture_memory_stays_in_private_pool():
    alloc = fw.cuda._runtime.state().allocator(0)

    def segment_of(ptr):
        return [base for base, size, _ in alloc.segments() if base <= ptr < base + size]

    x = _randn(N)
    s = fw.cuda.Stream()
    g = fw.cuda.CUDAGraph()
    big = (10 << 20) // 8 + 1          # over 10 MiB: a segment of its own
    with fw.cuda.graph(g, stream=s):
        y = x * 3
        a = fw.empty(N, dtype=fw.float64, device="cuda")
        pa = a.data_ptr()
        del a              # a free during capture goes back to the graph's pool ...
        b = fw.empty(N, dtype=fw.float64, device="cuda")
        assert b.data_ptr() == pa   # ... and serves the capture's next allocation
        del b
        pbig = fw.empty(big, dtype=fw.float64, device="cuda").data_ptr()
    with fw.cuda.stream(s):            # the capture's stream, but not capturing now
        outside = [fw.empty(N, dtype=fw.float64, device="cuda") for _ in range(3)]
        outside.append(fw.empty(big, dtype=fw.float64, device="cuda"))
    assert not {pa, pbig} & {t.data_ptr() for t in outside}   # nobody else gets them
    del outside
    fw.cuda.empty_cache()
    assert segment_of(pbig)                          # the graph keeps its pool reserved
    g.replay()
    np.testing.assert_array_equal(y.cpu().numpy(), x.cpu().numpy() * 3)  # y survives
    g.reset()
    fw.cuda.empty_cache()
    assert not segment_of(pbig)                      # released once the graph is gone
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()


def test_graphs_share_a_pool():
    pool = fw.cuda.graph_pool_handle()
    x = _randn(N)
    g1, g2 = fw.cuda.CUDAGraph(), fw.cuda.CUDAGraph()
    with fw.cuda.graph(g1, pool=pool):
        y1 = x + 1
        t = fw.empty(N, dtype=fw.float64, device="cuda")
        pt = t.data_ptr()
        del t
    with fw.cuda.graph(g2, pool=g1.pool(), stream=fw.cuda.Stream()):
        assert fw.empty(N, dtype=fw.float64, device="cuda").data_ptr() == pt
        y2 = y1 * 3
    assert g1.pool() == g2.pool() == pool
    x.copy_(_randn(N, seed=1))
    g1.replay()
    g2.replay()
    np.testing.assert_array_equal(y2.cpu().numpy(), (x.cpu().numpy() + 1) * 3)


def test_is_current_stream_capturing_and_errors():
    assert fw.cuda.is_current_stream_capturing() is False
    g = fw.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="Called CUDAGraph::replay without a preceding "
                                           "successful capture."):
        g.replay()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.pool()
    with pytest.raises(RuntimeError, match="must be captured on a non-default stream"):
        g.capture_begin()
    with pytest.raises(RuntimeError, match="Unknown capture error mode"):
        with fw.cuda.graph(g, capture_error_mode="everywhere"):
            pass
    s, other = fw.cuda.Stream(), fw.cuda.Stream()
    z = fw.zeros(4, device="cuda")
    with fw.cuda.stream(s):
        g.capture_begin()
        assert fw.cuda.is_current_stream_capturing() is True
        with fw.cuda.stream(other):
            assert fw.cuda.is_current_stream_capturing() is False
        z.fill_(2.0)
        g.capture_end()
        assert fw.cuda.is_current_stream_capturing() is False
        with pytest.raises(RuntimeError, match="already owns a captured graph"):
            g.capture_begin()
    assert z.sum().item() == 0.0
    g.replay()    # on the default stream
    assert z.sum().item() == 8.0
    with pytest.raises(NotImplementedError):
        g.debug_dump("graph.dot")


def test_driver_capture_calls(monkeypatch):
    """The GPU path against a fake driver: capture on the given stream, the private pool,
    an upload staged in pinned memory and captured, .item() refused before any driver
    call, instantiate, launch on the current stream, destroy."""
    from framework.cuda import _runtime as R
    from framework.cuda import allocator as A

    calls, keep = [], []

    class FakeDriver:
        capturing = False

        def __getattr__(self, name):   # calls whose answer does not matter
            return lambda *a, **kw: calls.append((name, *a))

        def stream_begin_capture(self, stream, mode):
            calls.append(("begin", stream, mode))
            self.capturing = True

        def stream_end_capture(self, stream):
            calls.append(("end", stream))
            self.capturing = False
            return 11

        def stream_is_capturing(self, stream):
            return int(self.capturing and stream == 0x77)

        def graph_instantiate(self, graph, flags):
            calls.append(("instantiate", graph))
            return 22

        def mem_host_alloc(self, nbytes):
            keep.append(ctypes.create_string_buffer(nbytes))
            return ctypes.addressof(keep[-1])

    alloc = A.CachingAllocator(A.HostRawBackend(), 0)

    class State:
        mode, driver, count = "driver", FakeDriver(), 1
        allocators = [alloc]

        @staticmethod
        def allocator(index):
            return alloc

    monkeypatch.setattr(R, "state", lambda: State)
    monkeypatch.setattr(R, "_state", State)
    monkeypatch.setattr(R, "on_device", lambda index: contextlib.nullcontext())
    s = fw.cuda.ExternalStream(0x77)
    g = fw.cuda.CUDAGraph()
    with fw.cuda.graph(g, stream=s):
        assert fw.cuda.is_current_stream_capturing()
        t = fw.empty(100, dtype=fw.float64, device="cuda")
        assert alloc._core.blocks()[0][1][0][2] < 0   # the graph's pool (a negative tag)
        up = fw.from_numpy(np.arange(6.0)).to("cuda", non_blocking=True)
        n = len(calls)
        with pytest.raises(RuntimeError, match="operation not permitted when stream is "
                                               "capturing"):
            fw.from_numpy(np.arange(6.0)).to("cuda")
        assert len(calls) == n          # refused before reaching the driver
    assert not fw.cuda.is_current_stream_capturing()
    names = [c[0] for c in calls]
    assert ("begin", 0x77, 0) in calls and ("end", 0x77) in calls
    htod = [c for c in calls if c[0] == "memcpy_htod"]
    assert len(htod) == 1 and htod[0][1] == up.data_ptr() and htod[0][3:] == (48, 0x77)
    staged = (ctypes.c_double * 6).from_address(htod[0][2])
    assert list(staged) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]   # kept by the graph
    assert names.index("instantiate") < names.index("graph_destroy")
    g.replay()
    assert calls[-1] == ("graph_launch", 22, 0)              # on the current stream
    g.reset()
    assert ("graph_exec_destroy", 22) in calls
    assert [c[0] for c in calls[-2:]] == ["graph_exec_destroy", "mem_free_host"]  # staging
    del t, up
