"""Run by test_store.py under ``mpiexec -n 2`` with two free ports and a scratch file:
TCPStore across processes, the stores of ``init_process_group`` (tcp://, file://, store=,
default), subgroups, ``monitored_barrier`` and the coalesced collectives."""
import sys
import time
import warnings
from datetime import timedelta

import framework as fw
import framework.distributed as dist
from mpi4py import MPI

port, init_port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rank = MPI.COMM_WORLD.Get_rank()
failures = []


def check(name, ok, detail=""):
    if not ok:
        failures.append(name)
    print(f"rank {rank} {'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)


# ---- a TCPStore between the two processes (the master on rank 0) -------------------------
store = dist.TCPStore("127.0.0.1", port, 2, rank == 0, timedelta(seconds=20))
check("tcp port", store.port == port)
if rank == 0:
    time.sleep(0.2)             # rank 1's get must wait for the key
    store.set("from0", b"hello")
    check("tcp add", store.add("counter", 5) in (5, 12))
else:
    check("tcp get waits", store.get("from0") == b"hello")
    check("tcp add", store.add("counter", 7) in (7, 12))
store.wait(["from0", "counter"])
store.set(f"done{rank}", str(rank))
store.wait(["done0", "done1"])
check("tcp counter", store.get("counter") == b"12")
check("tcp compare_set", store.compare_set("cs", "", "x") in (b"x",))
store.set_timeout(timedelta(seconds=0.2))
try:
    store.get("missing")
    check("tcp missing", False)
except dist.DistStoreError as e:
    check("tcp missing", str(e) == "wait timeout after 200ms, keys: /missing", str(e))
store.set_timeout(timedelta(seconds=20))
store.set(f"bye{rank}", "1")
store.wait(["bye0", "bye1"])    # the master keeps serving until both are done

# ---- the store of the default group, for each init method ---------------------------------
dist.init_process_group("mpi", init_method=f"tcp://127.0.0.1:{init_port}")
ds = dist.distributed_c10d._get_default_store()
ds.set(f"k{rank}", str(rank * 10))
check("tcp:// store", ds.get(f"k{1 - rank}") == str((1 - rank) * 10).encode())
check("tcp:// prefix", ds.underlying_store.get(f"0//k{rank}") == str(rank * 10).encode())
dist.barrier()
dist.destroy_process_group()

dist.init_process_group("mpi", init_method=f"file://{path}", world_size=2, rank=rank)
ds = dist.distributed_c10d._get_default_store()
check("file:// store", ds.add("n", 1) in (1, 2))
dist.barrier()
check("file:// shared", ds.get("n") == b"2")
dist.barrier()
dist.destroy_process_group()

fs = dist.FileStore(path + ".2", 2)
dist.init_process_group("mpi", store=fs, rank=rank, world_size=2)
dist.distributed_c10d._get_default_store().set(f"s{rank}", "v")
dist.barrier()
check("store= prefix", sorted(k for k in fs.list_keys() if k.endswith(("s0", "s1"))) ==
      ["2//s0", "2//s1"], str(fs.list_keys()))
dist.destroy_process_group()
try:
    dist.init_process_group("mpi", store=fs, rank=1 - rank, world_size=2)
    check("store= rank check", False)
except RuntimeError as e:
    check("store= rank check", "is MPI rank" in str(e), str(e))

dist.init_process_group("mpi")
ds = dist.distributed_c10d._get_default_store()
ds.set(f"d{rank}", "x")
check("default store", ds.multi_get(["d0", "d1"]) == [b"x", b"x"])

# ---- subgroups, monitored_barrier, coalesced collectives ----------------------------------
n0 = dist.get_pg_count()
cur, subs = dist.new_subgroups(group_size=1)
check("new_subgroups", len(subs) == 2 and dist.get_process_group_ranks(cur) == [rank] and
      dist.get_pg_count() == n0 + 1)
t = fw.tensor([float(rank + 1)])
dist.all_reduce(t, group=cur)
check("subgroup all_reduce", t.item() == rank + 1)
cur, subs = dist.new_subgroups_by_enumeration([[0, 1]])
t = fw.tensor([float(rank + 1)])
dist.all_reduce(t, group=cur)
check("by_enumeration", t.item() == 3 and len(subs) == 1)
try:
    dist.new_subgroups(group_size=3)
    check("subgroup size check", False)
except ValueError as e:
    check("subgroup size check", "must not exceed the world size (2)" in str(e), str(e))

dist.monitored_barrier(timeout=timedelta(seconds=10))
check("monitored_barrier", True)

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    a, b = fw.tensor([1.0, 2.0]) * (rank + 1), fw.tensor([5.0]) * (rank + 1)
    dist.all_reduce_coalesced([a, b])
    check("all_reduce_coalesced", a.tolist() == [3.0, 6.0] and b.tolist() == [15.0])
    outs = [[fw.zeros(2), fw.zeros(1)] for _ in range(2)]
    fut = dist.all_gather_coalesced(outs, [fw.tensor([1.0, 2.0]) + rank,
                                           fw.tensor([9.0]) * rank], async_op=True)
    fut.wait()
    check("all_gather_coalesced", [[o.tolist() for o in row] for row in outs] ==
          [[[1.0, 2.0], [0.0]], [[2.0, 3.0], [9.0]]], str(outs))
check("backend config", dist.get_backend_config() == "cpu:mpi,cuda:mpi")
dist.breakpoint(rank=5)         # no rank stops: only the barrier
check("breakpoint", True)

# last: rank 1 does not come, rank 0 names it
if rank == 0:
    try:
        dist.monitored_barrier(timeout=timedelta(seconds=0.3), wait_all_ranks=True)
        check("monitored_barrier timeout", False)
    except RuntimeError as e:
        check("monitored_barrier timeout",
              str(e) == "[Rank 0]: Ranks 1 failed to pass monitoredBarrier in 300 ms", str(e))
dist.barrier()
print(f"rank {rank} DONE failures={failures}", flush=True)
dist.destroy_process_group()
