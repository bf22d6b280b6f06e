"""Small workers for test_collectives.py: ``env CODE``, ``kill|stuck TIMEOUT``, ``raise``, ``sleep``,
``single``."""
import datetime
import os
import signal
import sys
import time

import framework as fw
import framework.distributed as dist

mode = sys.argv[1]
if mode == "env":
    dist.init_process_group("mpi", init_method="env://")
    r = dist.get_rank()
    print(f"rank={r} RANK={os.environ['RANK']} LOCAL_RANK={os.environ['LOCAL_RANK']} "
          f"WORLD_SIZE={os.environ['WORLD_SIZE']} MASTER_ADDR={os.environ['MASTER_ADDR']} "
          f"MASTER_PORT={os.environ['MASTER_PORT']} world={dist.get_world_size()}", flush=True)
    dist.barrier()
    sys.exit(int(sys.argv[2]) if r == 1 else 0)
elif mode in ("kill", "stuck"):
    # rank 1 dies (kill) or never calls the next collective (stuck)
    timeout = float(sys.argv[2])
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=timeout))
    r = dist.get_rank()
    t = fw.ones(1000)
    dist.all_reduce(t)
    if r == 1:
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(timeout + 30)
    start = time.monotonic()
    try:
        for _ in range(3):
            dist.all_reduce(t)
            dist.barrier()
    except RuntimeError as e:
        print(f"rank {r} raised after {time.monotonic() - start:.2f}s: {e}", flush=True)
        sys.exit(3)
    print(f"rank {r} did not raise", flush=True)
elif mode == "raise":
    # rank 1 leaves on an exception while rank 0 waits for it (a long timeout): the job
    # must end at once, not deadlock in MPI_Finalize
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=600))
    t = fw.ones(10)
    dist.all_reduce(t)
    if dist.get_rank() == 1:
        raise ValueError("boom on rank 1")
    dist.all_reduce(t)
    print("rank 0 did not raise", flush=True)
elif mode == "sleep":
    dist.init_process_group("mpi")
    try:
        # "ready" inside the try: a SIGINT that follows it at once still lands in the handler
        # one write: print() sends the text and the newline separately when unbuffered
        sys.stdout.write(f"rank {dist.get_rank()} ready\n")
        sys.stdout.flush()
        time.sleep(60)
    except KeyboardInterrupt:
        print(f"rank {dist.get_rank()} interrupted", flush=True)
        sys.exit(7)
elif mode == "single":
    # a process not started by mpiexec that claims a world of 2
    os.environ["WORLD_SIZE"] = "2"
    os.environ["RANK"] = "1"
    try:
        dist.init_process_group("mpi", init_method="env://")
    except RuntimeError as e:
        print("ERROR", e)
