"""Run by test_lazy_and_parallel.py under ``mpiexec -n 2``: SyncBatchNorm on two processes,
each with half of the batch, against one BatchNorm on the whole batch."""
import sys

import numpy as np

import framework as fw
import framework.distributed as dist
import framework.nn as nn

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
device = sys.argv[1] if len(sys.argv) > 1 else "cuda"


def check(name, ok, detail=""):
    print(f"rank {rank} {'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)


rng = np.random.default_rng(0)
x_all = rng.standard_normal((4, 3, 5)).astype(np.float32) * 2 + 1
g_all = rng.standard_normal((4, 3, 5)).astype(np.float32)
half = slice(2 * rank, 2 * rank + 2)

ref = nn.BatchNorm1d(3, momentum=0.3)
with fw.no_grad():
    ref.weight.copy_(fw.tensor([1.5, -0.5, 2.0]))
    ref.bias.copy_(fw.tensor([0.1, 0.2, -0.3]))
sync = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm1d(3, momentum=0.3)))
sync.load_state_dict({"0." + k: v for k, v in ref.state_dict().items()})
sync.to(device)

xr = fw.tensor(x_all, requires_grad=True)
out_ref = ref(xr)
(out_ref * fw.tensor(g_all)).sum().backward()

xs = fw.tensor(x_all[half], device=device, requires_grad=True)
out = sync(xs)
(out * fw.tensor(g_all[half], device=device)).sum().backward()

ok_out = np.allclose(out.detach().cpu().numpy(), out_ref.detach().numpy()[half], atol=1e-4)
check("output", ok_out)
bn = sync[0]
check("running_mean", np.allclose(bn.running_mean.cpu().numpy(), ref.running_mean.numpy(),
                                  atol=1e-5))
check("running_var", np.allclose(bn.running_var.cpu().numpy(), ref.running_var.numpy(),
                                 atol=1e-5))
check("input_grad", np.allclose(xs.grad.cpu().numpy(), xr.grad.numpy()[half], atol=1e-4))
gw = bn.weight.grad.clone()
gb = bn.bias.grad.clone()
dist.all_reduce(gw)
dist.all_reduce(gb)
check("weight_grad", np.allclose(gw.cpu().numpy(), ref.weight.grad.numpy(), atol=1e-4))
check("bias_grad", np.allclose(gb.cpu().numpy(), ref.bias.grad.numpy(), atol=1e-4))
# eval: the running statistics, no communication
bn.eval()
ref.eval()
y = bn(fw.tensor(x_all[half], device=device))
check("eval", np.allclose(y.detach().cpu().numpy(), ref(fw.tensor(x_all)).detach().numpy()[half],
                          atol=1e-4))
# a cpu input in a distributed training forward: PyTorch's error
bn.train()
try:
    nn.SyncBatchNorm(3)(fw.ones(2, 3))
    check("cpu_error", False, "no error")
except ValueError as e:
    check("cpu_error", "expected input tensor to be on GPU" in str(e), str(e))
dist.destroy_process_group()
