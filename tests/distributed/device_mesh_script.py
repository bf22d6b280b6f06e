"""Run by test_device_mesh.py under ``mpiexec -n 4``: a 2x2 DeviceMesh (groups, sub-meshes,
coordinates against the mesh tensor), fully_shard over its "dp" dimension, object
send/recv and the small process-group helpers."""
import os
import sys

import numpy as np

import framework as fw
import framework.distributed as dist
import framework.nn as nn
import framework.nn.functional as F
from framework.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from framework.distributed.device_mesh import init_device_mesh as init_from_module
from framework.distributed.fsdp import fully_shard

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
failures = []


def check(name, ok, detail=""):
    if not ok:
        failures.append(name)
    print(f"rank {rank} {'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)


def raises(exc, text, fn):
    try:
        fn()
    except exc as e:
        return text in str(e)
    return False


assert world == 4, "run with mpiexec -n 4"
mesh = dist.init_device_mesh(device, (2, 2), mesh_dim_names=("dp", "tp"))
arr = np.asarray(mesh.mesh.tolist())
coord = tuple(int(c) for c in np.argwhere(arr == rank)[0])
check("init_device_mesh exported twice", init_from_module is dist.init_device_mesh
      and isinstance(mesh, dist.DeviceMesh))
check("mesh tensor, shape, ndim, names", arr.tolist() == [[0, 1], [2, 3]]
      and mesh.shape == (2, 2) and mesh.ndim == 2 and mesh.size() == 4
      and mesh.size(1) == 2 and mesh.mesh_dim_names == ("dp", "tp"))
check("get_coordinate", mesh.get_coordinate() == coord, str(mesh.get_coordinate()))
check("get_rank and get_local_rank", mesh.get_rank() == rank
      and mesh.get_local_rank("dp") == coord[0] and mesh.get_local_rank(1) == coord[1])

# each dimension's group holds the ranks along that dimension through this rank
dp_ranks = arr[:, coord[1]].tolist()
tp_ranks = arr[coord[0], :].tolist()
g_dp, g_tp = mesh.get_group("dp"), mesh.get_group(1)
check("dimension groups", dist.get_process_group_ranks(g_dp) == dp_ranks
      and dist.get_process_group_ranks(g_tp) == tp_ranks
      and dist.get_rank(g_dp) == coord[0] and dist.get_rank(g_tp) == coord[1],
      f"{dist.get_process_group_ranks(g_dp)} {dist.get_process_group_ranks(g_tp)}")
t = fw.tensor([float(rank)], device=device)
dist.all_reduce(t, group=g_dp)
check("all_reduce over the dp group", float(t) == sum(dp_ranks), str(float(t)))

sub = mesh["tp"]
check("mesh['tp'] sub-mesh", sub.mesh.tolist() == tp_ranks and sub.ndim == 1
      and sub.mesh_dim_names == ("tp",) and sub.get_local_rank() == coord[1]
      and sub.get_group() is g_tp and sub.get_coordinate() == (coord[1],))
sub = mesh["dp"]
check("mesh['dp'] sub-mesh", sub.mesh.tolist() == dp_ranks and sub.size() == 2
      and sub.get_group() is g_dp and sub.get_coordinate() == (coord[0],))
check("mesh['dp', 'tp'] is the mesh", mesh["dp", "tp"] is mesh)
check("errors", raises(KeyError, "Invalid mesh_dim_names", lambda: mesh["pp"])
      and raises(KeyError, "ascending order", lambda: mesh["tp", "dp"])
      and raises(RuntimeError, "mesh_dim", lambda: mesh.get_group())
      and raises(RuntimeError, "same length",
                 lambda: dist.init_device_mesh(device, (4,), mesh_dim_names=("a", "b")))
      and raises(RuntimeError, "index is not supported",
                 lambda: dist.init_device_mesh("cpu:0", (4,))))

# a DeviceMesh from an explicit (transposed) layout
m2 = dist.DeviceMesh(device, [[0, 2], [1, 3]], mesh_dim_names=("a", "b"))
arr2 = np.array([[0, 2], [1, 3]])
c2 = tuple(int(c) for c in np.argwhere(arr2 == rank)[0])
check("DeviceMesh from a layout", m2.get_coordinate() == c2
      and dist.get_process_group_ranks(m2.get_group("a")) == arr2[:, c2[1]].tolist()
      and m2["b"].mesh.tolist() == arr2[c2[0]].tolist())
m1 = dist.DeviceMesh(device, list(range(4)))
check("1-D mesh over the world uses the default group",
      m1.get_group() is dist.group.WORLD and m1.get_local_rank() == rank)

# fully_shard over the dp dimension: ranks of one dp group split the batch; each tp
# column holds its own (identical) copy
fw.manual_seed(0)
ref = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2)).to(device).double()
fw.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2)).to(device).double()
fully_shard(model[0], mesh=mesh["dp"])
fully_shard(model, mesh=mesh["dp"])
rng = np.random.default_rng(1)
X = fw.tensor(rng.standard_normal((4, 4)), device=device)
Y = fw.tensor(rng.standard_normal((4, 2)), device=device)
ro = fw.optim.SGD(ref.parameters(), lr=0.2)
mo = fw.optim.SGD(model.parameters(), lr=0.2)
i = coord[0]
for _ in range(3):
    ro.zero_grad()
    F.mse_loss(ref(X), Y).backward()
    ro.step()
    mo.zero_grad()
    F.mse_loss(model(X[2 * i:2 * i + 2]), Y[2 * i:2 * i + 2]).backward()
    mo.step()
full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
d = max(float((full[k] - v).abs().max()) for k, v in ref.state_dict().items())
local = sum(p.numel() for p in model.parameters())
check("fully_shard on mesh['dp'] equals one process", d < 1e-12 and
      local < sum(p.numel() for p in ref.parameters()), f"max diff {d:.1e}")
check("fully_shard rejects a 2-D mesh", raises(NotImplementedError, "1-D mesh",
      lambda: fully_shard(nn.Linear(2, 2).to(device), mesh=mesh)))

# objects point to point: 0 -> 1 and 2 -> 3 (receiving from any rank)
if rank % 2 == 0:
    dist.send_object_list([{"from": rank}, [rank] * 3, "x" * 5000], dst=rank + 1)
    got = None
else:
    got = [None, None, None]
    sender = dist.recv_object_list(got, src=rank - 1 if rank == 1 else None)
if rank % 2:
    check("send_object_list / recv_object_list", sender == rank - 1
          and got == [{"from": rank - 1}, [rank - 1] * 3, "x" * 5000], str(got)[:60])
check("send_object_list to self raises", raises(ValueError, "destination rank",
      lambda: dist.send_object_list([1], dst=rank)))

os.environ.pop("LOCAL_RANK", None)
check("get_node_local_rank", dist.get_node_local_rank(fallback_rank=7) == 7 and raises(
      RuntimeError, "LOCAL_RANK is not in the environment", dist.get_node_local_rank))
os.environ["LOCAL_RANK"] = "3"
check("get_node_local_rank from LOCAL_RANK", dist.get_node_local_rank() == 3)
check("is_backend_available", dist.is_backend_available("mpi")
      and dist.is_backend_available("gloo") and not dist.is_backend_available("ucc"))
check("get_default_backend_for_device", dist.get_default_backend_for_device("cpu") == "gloo"
      and dist.get_default_backend_for_device(fw.device("cuda")) == "nccl"
      and raises(ValueError, "Default backend not registered",
                 lambda: dist.get_default_backend_for_device("xla")))

dist.destroy_process_group()
print(f"rank {rank} DONE failures={len(failures)}", flush=True)
sys.exit(1 if failures else 0)
