"""gloo baseline for the `gloo` bench: torch.distributed all_reduce (SUM) on CPU over loopback.

Usage: python gloo_allreduce.py WORLD REPS DTYPE:BYTES [DTYPE:BYTES ...]
  WORLD  processes (one per rank, spawned here)
  REPS   timed all_reduce calls per size (after one untimed warm-up call)
  DTYPE  float32 or int32; BYTES the tensor size per rank in bytes

Prints one JSON object per size on stdout:
  {"world": 4, "dtype": "float32", "bytes": 4194304, "secs": [...], "median": 0.0123, "ok": true}
where each entry of secs is the slowest rank's time of one call (barrier before each call), and
ok says the sum was exact (integer-valued tensors, so float32 sums are exact too).
"""

import json
import os
import queue
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, world, port, reps, jobs, q):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    for dtype_name, nbytes in jobs:
        dtype = getattr(torch, dtype_name)
        n = nbytes // 4
        # Small integers: every float32 sum is exact, so the check is exact.
        base = (torch.arange(n, dtype=torch.int64) % 1000 + rank).to(dtype)
        want = (torch.arange(n, dtype=torch.int64) % 1000) * world + world * (world - 1) // 2
        secs = []
        ok = True
        for i in range(reps + 1):
            t = base.clone()
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
            dt = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
            dist.all_reduce(dt, op=dist.ReduceOp.MAX)
            if i > 0:
                secs.append(dt.item())
            ok = ok and bool(torch.equal(t.to(torch.int64), want))
        okt = torch.tensor([1 if ok else 0])
        dist.all_reduce(okt, op=dist.ReduceOp.MIN)
        if rank == 0:
            q.put(
                {
                    "world": world,
                    "dtype": dtype_name,
                    "bytes": nbytes,
                    "secs": secs,
                    "median": statistics.median(secs),
                    "ok": bool(okt.item()),
                }
            )
    dist.destroy_process_group()
    if rank == 0:
        q.put(None)


def main():
    world, reps = int(sys.argv[1]), int(sys.argv[2])
    jobs = []
    for a in sys.argv[3:]:
        d, b = a.split(":")
        if d not in ("float32", "int32"):
            sys.exit(f"dtype {d!r}: must be float32 or int32")
        jobs.append((d, int(b)))
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    procs = [
        ctx.Process(target=rank_main, args=(r, world, port, reps, jobs, q))
        for r in range(world)
    ]
    for p in procs:
        p.start()
    while True:
        try:
            item = q.get(timeout=5)
        except queue.Empty:
            failed = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
            if failed:
                for p in procs:
                    p.kill()
                sys.exit(f"a gloo rank exited with status {failed[0]}")
            continue
        if item is None:
            break
        print(json.dumps(item), flush=True)
    for p in procs:
        p.join()
        if p.exitcode != 0:
            sys.exit(f"a gloo rank exited with status {p.exitcode}")


if __name__ == "__main__":
    main()
