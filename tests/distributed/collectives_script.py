"""Run by test_collectives.py under ``mpiexec -n N``: every collective against NumPy.

Every rank builds every rank's input (seeded by rank, dtype and size), so each can compute
the expected result in float64 NumPy. Prints one line per failure and exits 1 if any."""
import sys

import numpy as np

import framework as fw
import framework.distributed as dist

failures = []
checks = [0]


def check(name, ok, detail=""):
    checks[0] += 1
    if not ok:
        failures.append(name)
        print(f"rank {RANK} FAIL {name} {detail}", flush=True)


def raises(name, fn, text, exc=(RuntimeError, ValueError)):
    try:
        fn()
    except exc as e:
        check(name, text in str(e), f"message: {e}")
        return
    check(name, False, "did not raise")


RANK = -1
# before init: PyTorch's message
raises("not initialized", lambda: dist.all_reduce(fw.ones(2)),
       "Default process group has not been initialized, please make sure to call "
       "init_process_group.")
check("is_available", dist.is_available() and dist.is_mpi_available())
check("is_initialized before", not dist.is_initialized())

dist.init_process_group("mpi", init_method="env://")
RANK, N = dist.get_rank(), dist.get_world_size()
check("is_initialized after", dist.is_initialized() and dist.get_backend() == "mpi")
raises("init twice", lambda: dist.init_process_group("mpi"),
       "trying to initialize the default process group twice!")

D = fw
DTYPES = [D.float32, D.float64, D.float16, D.bfloat16, D.int32, D.int64, D.int8, D.uint8,
          D.bool]
FLOATS = (D.float32, D.float64, D.float16, D.bfloat16)
BIG = 3 * 2 ** 20 + 3          # bytes: several MiB and odd


def data(rank, dtype, n, kind="any"):
    """Rank ``rank``'s input as a float64 array with values exact in ``dtype``."""
    rng = np.random.default_rng([rank, DTYPES.index(dtype), n])
    if dtype is D.bool:
        return rng.integers(0, 2, n).astype(np.float64)
    if kind == "prod":      # products of N values stay exact and in range
        v = rng.integers(1, 3, n).astype(np.float64)
        return v if dtype not in FLOATS else v * rng.choice([1.0, 0.5, -1.0], n)
    if dtype in FLOATS:
        v = rng.standard_normal(n)
        # round to the dtype so that every rank starts from exactly what the tensor holds
        return np.asarray(fw.tensor(v, dtype=dtype).to(fw.float64))
    lo, hi = (0, 40) if dtype is D.uint8 else (-40, 40)
    return rng.integers(lo, hi, n).astype(np.float64)


def make(a, dtype, device="cpu"):
    return fw.tensor(a, dtype=fw.float64).to(dtype).to(device)


def got(t):
    return np.asarray(t.cpu().to(fw.float64)).reshape(-1)


def close(a, b, dtype):
    if a.shape != b.shape:
        return False
    if dtype in (D.float16, D.bfloat16):
        # reduced in float32, rounded once: at most one unit in the last place
        return np.allclose(a, b, rtol=2.0 ** -8 if dtype is D.bfloat16 else 2.0 ** -11,
                           atol=1e-6)
    if dtype in FLOATS:
        return np.allclose(a, b, rtol=1e-5 if dtype is D.float32 else 1e-12, atol=1e-6)
    return np.array_equal(a, b)


def expected_reduce(op, dtype, n, kind):
    xs = np.stack([data(r, dtype, n, kind) for r in range(N)])
    if dtype is D.bool:
        f = {"SUM": np.max, "PRODUCT": np.min, "MIN": np.min, "MAX": np.max}[op]
        return f(xs, 0)
    if op == "SUM":
        return xs.sum(0)
    if op == "AVG":
        return xs.sum(0) / N if dtype in FLOATS else np.trunc(xs.sum(0) / N)
    if op == "PRODUCT":
        return xs.prod(0)
    return xs.min(0) if op == "MIN" else xs.max(0)


def sizes(dtype):
    return [0, 1, 7, 1001] + ([BIG // dtype.itemsize] if dtype in (D.float32, D.bfloat16,
                                                                 D.int64) else [])


def wrap(x, dtype):
    """What an integer result looks like after the dtype's wrap-around."""
    if dtype in FLOATS or dtype is D.bool:
        return x
    return x.astype(dtype.np).astype(np.float64)


# ---- all_reduce and reduce ------------------------------------------------------------
for dtype in DTYPES:
    for n in sizes(dtype):
        for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]:
            if op == "AVG" and dtype is D.bool:
                continue
            if n > 2000 and op not in ("SUM", "MAX"):
                continue
            kind = "prod" if op == "PRODUCT" else "any"
            want = wrap(expected_reduce(op, dtype, n, kind), dtype)
            t = make(data(RANK, dtype, n, kind), dtype)
            w = dist.all_reduce(t, getattr(dist.ReduceOp, op), async_op=(n == 7))
            if w is not None:
                w.wait()
                check("work completed", w.is_completed())
            if dtype is D.float16 or dtype is D.bfloat16:
                want = np.asarray(fw.tensor(want).to(dtype).to(fw.float64))
            check(f"all_reduce {op} {dtype} n={n}", close(got(t), want, dtype))
            if n <= 2000 and op in ("SUM", "MAX"):
                t = make(data(RANK, dtype, n, kind), dtype)
                dist.reduce(t, dst=N - 1, op=getattr(dist.ReduceOp, op))
                mine = data(RANK, dtype, n, kind)
                ok = close(got(t), want, dtype) if RANK == N - 1 else \
                    close(got(t), wrap(mine, dtype), dtype)
                check(f"reduce {op} {dtype} n={n}", ok)

# non-contiguous tensors go through a copy that is written back
t = make(np.arange(12.0) + RANK, D.float32).view(3, 4).t()
dist.all_reduce(t)
want = sum(np.arange(12.0).reshape(3, 4).T + r for r in range(N))
check("all_reduce non-contiguous", np.allclose(np.asarray(t), want))

# ---- broadcast, gathers, scatters -------------------------------------------------------
for dtype in DTYPES:
    for n in sizes(dtype)[:4] + ([sizes(dtype)[-1]] if dtype is D.float32 else []):
        mine = data(RANK, dtype, n)
        t = make(mine, dtype)
        dist.broadcast(t, src=N - 1)
        check(f"broadcast {dtype} n={n}", close(got(t), data(N - 1, dtype, n), dtype))

        everyone = np.concatenate([data(r, dtype, n) for r in range(N)])
        outs = [make(np.zeros(n), dtype) for _ in range(N)]
        dist.all_gather(outs, make(mine, dtype))
        check(f"all_gather {dtype} n={n}",
              close(np.concatenate([got(o) for o in outs]), everyone, dtype))
        out = make(np.zeros(N * n), dtype)
        w = dist.all_gather_into_tensor(out, make(mine, dtype), async_op=True)
        w.wait()
        check(f"all_gather_into_tensor {dtype} n={n}", close(got(out), everyone, dtype))

        if dtype is not D.bool:
            full = [data(r, dtype, N * n) for r in range(N)]
            tot = wrap(sum(full), dtype)
            out = make(np.zeros(n), dtype)
            dist.reduce_scatter_tensor(out, make(full[RANK], dtype))
            want = tot[RANK * n:(RANK + 1) * n]
            if dtype in (D.float16, D.bfloat16):
                want = np.asarray(fw.tensor(want).to(dtype).to(fw.float64))
            check(f"reduce_scatter_tensor {dtype} n={n}", close(got(out), want, dtype))
            out = make(np.zeros(n), dtype)
            ins = [make(full[RANK][i * n:(i + 1) * n], dtype) for i in range(N)]
            dist.reduce_scatter(out, ins)
            check(f"reduce_scatter {dtype} n={n}", close(got(out), want, dtype))

        gl = [make(np.zeros(n), dtype) for _ in range(N)] if RANK == 0 else None
        dist.gather(make(mine, dtype), gl, dst=0)
        if RANK == 0:
            check(f"gather {dtype} n={n}",
                  close(np.concatenate([got(o) for o in gl]), everyone, dtype))
        src_parts = [data(100 + i, dtype, n) for i in range(N)]
        out = make(np.zeros(n), dtype)
        dist.scatter(out, [make(p, dtype) for p in src_parts] if RANK == 1 else None, src=1)
        check(f"scatter {dtype} n={n}", close(got(out), src_parts[RANK], dtype))

        # all_to_all_single: even split, then uneven splits along dim 0
        rows = [data(10 * r, dtype, N * n) for r in range(N)]
        out = make(np.zeros(N * n), dtype)
        dist.all_to_all_single(out, make(rows[RANK], dtype))
        want = np.concatenate([rows[r][RANK * n:(RANK + 1) * n] for r in range(N)])
        check(f"all_to_all_single {dtype} n={n}", close(got(out), want, dtype))
        if n:
            split = [[(r + c) % 3 + 1 for c in range(N)] for r in range(N)]   # r -> c rows
            src = [data(20 + r, dtype, sum(split[r]) * n).reshape(-1, n) for r in range(N)]
            ins = make(src[RANK], dtype)
            out = make(np.zeros((sum(split[r][RANK] for r in range(N)), n)), dtype)
            dist.all_to_all_single(out, ins, [split[r][RANK] for r in range(N)],
                                   split[RANK])
            want = np.concatenate([src[r][sum(split[r][:RANK]):sum(split[r][:RANK + 1])]
                                   for r in range(N)]).reshape(-1)
            check(f"all_to_all_single uneven {dtype} n={n}", close(got(out), want, dtype))

# ---- point to point: a ring ---------------------------------------------------------------
for n in [0, 1, 7, BIG // 4]:
    nxt, prv = (RANK + 1) % N, (RANK - 1) % N
    out = fw.zeros(n)
    rw = dist.irecv(out, src=prv)
    sw = dist.isend(make(data(RANK, D.float32, n), D.float32), dst=nxt)
    sw.wait()
    rw.wait()
    check(f"isend/irecv ring n={n}", close(got(out), data(prv, D.float32, n), D.float32))
if RANK == 0:
    for r in range(1, N):
        t = fw.zeros(3, dtype=fw.int64)
        src = dist.recv(t)
        check("recv from any source", t.tolist() == [src] * 3, f"{src} {t.tolist()}")
else:
    dist.send(fw.full((3,), RANK, dtype=fw.int64), dst=0)

# ---- objects, barrier, groups -----------------------------------------------------------
objs = [None, None] if RANK else [{"a": [1, 2]}, "x" * 100000]
dist.broadcast_object_list(objs, src=0)
check("broadcast_object_list", objs == [{"a": [1, 2]}, "x" * 100000])
objs = [None] * N
dist.all_gather_object(objs, ("rank", RANK, "y" * RANK))
check("all_gather_object", objs == [("rank", r, "y" * r) for r in range(N)], str(objs))
objs = [None] * N if RANK == 0 else None
dist.gather_object(RANK * 10, objs, dst=0)
check("gather_object", RANK != 0 or objs == [r * 10 for r in range(N)])
out = [None]
dist.scatter_object_list(out, [f"to {r}" for r in range(N)] if RANK == 0 else None, src=0)
check("scatter_object_list", out == [f"to {RANK}"])
dist.barrier()
w = dist.barrier(async_op=True)
w.wait()

g = dist.new_group([0, N - 1])
if RANK in (0, N - 1):
    t = fw.full((5,), float(RANK + 1))
    dist.all_reduce(t, group=g)
    check("new_group all_reduce", t.tolist() == [float(N + 1)] * 5, str(t.tolist()))
    check("new_group ranks", dist.get_rank(g) == (0 if RANK == 0 else 1)
          and dist.get_world_size(g) == 2 and dist.get_process_group_ranks(g) == [0, N - 1])
    t = fw.full((2,), float(RANK))
    dist.broadcast(t, src=N - 1, group=g)
    check("new_group broadcast (global src)", t.tolist() == [float(N - 1)] * 2)
else:
    check("non member", dist.get_rank(g) == -1 and dist.all_reduce(fw.ones(1), group=g)
          is None)

# ---- errors -------------------------------------------------------------------------------
raises("all_gather_into_tensor size", lambda: dist.all_gather_into_tensor(
    fw.zeros(3 * N + 1), fw.zeros(3)), "output tensor size must be equal to world_size "
    "times input tensor size")
raises("reduce_scatter_tensor size", lambda: dist.reduce_scatter_tensor(
    fw.zeros(3), fw.zeros(3 * N + 1)), "input tensor must be the same size as output size "
    "times world size")
raises("all_gather list length", lambda: dist.all_gather([fw.zeros(2)], fw.zeros(2)),
       "expected one per rank")
raises("all_gather numel", lambda: dist.all_gather([fw.zeros(3)] * N, fw.zeros(2)),
       "All tensor operands to scatter/gather must have the same number of elements")
raises("dtype", lambda: dist.all_gather_into_tensor(fw.zeros(2 * N), fw.zeros(
    2, dtype=fw.int32)), "must have the same dtype")
raises("not a tensor", lambda: dist.all_reduce([1, 2]), "Expected parameter `tensor`",
       TypeError)
raises("bad rank", lambda: dist.broadcast(fw.zeros(1), src=N + 3), "does not contain rank")

# ---- simulated cuda through host memory ---------------------------------------------------
if "--cuda" in sys.argv:
    for dtype in (D.float32, D.bfloat16, D.int32):
        t = make(data(RANK, dtype, 37), dtype, "cuda")
        dist.all_reduce(t)
        want = sum(data(r, dtype, 37) for r in range(N))
        if dtype is D.bfloat16:
            want = np.asarray(fw.tensor(want).to(dtype).to(fw.float64))
        check(f"cuda all_reduce {dtype}", t.device.type == "cuda" and close(got(t), want,
                                                                           dtype))
        out = make(np.zeros(37 * N), dtype, "cuda")
        dist.all_gather_into_tensor(out, t[:37])
        check(f"cuda all_gather_into_tensor {dtype}", close(got(out), np.tile(got(t), N),
                                                            dtype))
        t = make(data(RANK, dtype, 5), dtype, "cuda")
        dist.broadcast(t, src=0)
        check(f"cuda broadcast {dtype}", close(got(t), data(0, dtype, 5), dtype))

dist.destroy_process_group()
check("destroyed", not dist.is_initialized())
print(f"rank {RANK} DONE checks={checks[0]} failures={len(failures)}", flush=True)
sys.exit(1 if failures else 0)
