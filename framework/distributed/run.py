"""The launcher: ``python -m framework.distributed.run --nproc-per-node N script.py args``.

torchrun's interface on one node. The N processes are started by the ``mpiexec`` of the MPI
installed with mpi4py (the ``mpich`` wheel's, beside this Python), so they form one MPI
world that ``init_process_group("mpi")`` joins; each also gets ``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT`` as torchrun sets
them. Nothing is restarted: when one process fails, MPI stops the others. SIGINT and
SIGTERM are forwarded to them; the exit code is the worst of theirs.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import uuid


def find_mpiexec():
    """``mpiexec`` beside this Python (the ``mpich`` wheel's), else the first on PATH."""
    here = os.path.dirname(sys.executable)
    path = shutil.which("mpiexec", path=here) or shutil.which("mpiexec")
    if path is None:
        raise RuntimeError("framework.distributed.run: no mpiexec found; install the MPI "
                           "wheels with 'pip install mpich mpi4py'")
    return path


def get_args_parser():
    """The launcher's argument parser (``launch`` adds ``--use-env`` to it)."""
    p = argparse.ArgumentParser(
        prog="python -m framework.distributed.run",
        description="Starts N processes of a training script, one MPI world (torchrun's "
                    "interface, one node).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1",
                   help="number of processes: an integer, or 'cpu' (one per core)")
    p.add_argument("--nnodes", default="1", help="only 1 (one node) is supported")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--standalone", action="store_true", help="accepted (one node anyway)")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0)
    p.add_argument("--rdzv-backend", "--rdzv_backend", default="static")
    p.add_argument("--rdzv-endpoint", "--rdzv_endpoint", default="")
    p.add_argument("--rdzv-id", "--rdzv_id", default="none")
    p.add_argument("--run-path", "--run_path", default=None)
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the script as an executable, not with Python")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(argv=None, parser=None):
    p = parser if parser is not None else get_args_parser()
    args = p.parse_args(argv)
    if str(args.nnodes) not in ("1", "1:1"):
        p.error("only --nnodes 1 is supported (one node)")
    if args.max_restarts != 0:
        p.error("restarts are not supported (--max-restarts 0)")
    n = args.nproc_per_node
    if n in ("cpu", "auto"):
        n = os.cpu_count() or 1
    try:
        args.nproc_per_node = int(n)
    except ValueError:
        p.error(f"--nproc-per-node must be an integer, 'cpu' or 'auto', got {n!r}")
    if args.nproc_per_node < 1:
        p.error("--nproc-per-node must be at least 1")
    return args


def command(args):
    """The mpiexec command line: one section per rank with its own environment."""
    n = args.nproc_per_node
    if args.no_python:
        prog = [args.training_script]
    elif args.module:
        prog = [sys.executable, "-u", "-m", args.training_script]
    else:
        prog = [sys.executable, "-u", args.training_script]
    script_args = list(args.training_script_args)
    common = {"WORLD_SIZE": n, "LOCAL_WORLD_SIZE": n, "GROUP_RANK": args.node_rank,
              "MASTER_ADDR": args.master_addr, "MASTER_PORT": args.master_port,
              "TORCHELASTIC_RUN_ID": args.rdzv_id if args.rdzv_id != "none"
              else uuid.uuid4().hex[:8]}
    cmd = [find_mpiexec()]
    for k, v in common.items():
        cmd += ["-genv", k, str(v)]
    for rank in range(n):
        if rank:
            cmd.append(":")
        cmd += ["-n", "1", "-env", "RANK", str(rank), "-env", "LOCAL_RANK", str(rank),
                "-env", "GROUP_RANK", str(args.node_rank)] + prog
        # framework.distributed.launch without --use-env passes the local rank as torch's
        if not getattr(args, "use_env", True):
            cmd.append(f"--local-rank={rank}")
        cmd += script_args
    return cmd


def run(args):
    """Starts the processes, forwards signals to them, returns the worst exit code."""
    proc = subprocess.Popen(command(args))

    def forward(signum, frame):
        # mpiexec passes SIGINT/SIGTERM on to every rank
        try:
            proc.send_signal(signum)
        except ProcessLookupError:
            pass
    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        rc = proc.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    # mpiexec's status is the worst of the ranks'; a rank killed by signal N reads as N
    return 128 + (-rc) if rc < 0 else rc


def main(argv=None):
    sys.exit(run(parse_args(argv)))


if __name__ == "__main__":
    main()
