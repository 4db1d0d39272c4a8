"""Worker processes of the pytest suite: each runs one rank and reports through a queue."""

import os
import time
import traceback


def launch(fn, world, args=(), env=None, timeout=240):
    """Runs ``fn(rank, world, store_path, *args)`` in ``world`` spawned processes; returns
    the results by rank (an exception in any rank fails with its traceback)."""
    import tempfile

    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    d = tempfile.mkdtemp(prefix="fanin-test-")
    store = os.path.join(d, "store")
    procs = [ctx.Process(target=_entry, args=(fn, r, world, store, args, env or {}, q)) for r in range(world)]
    for p in procs:
        p.start()
    out = {}
    deadline = time.monotonic() + timeout
    failed = True
    try:
        while len(out) < world and time.monotonic() < deadline:
            try:
                r, ok, v = q.get(timeout=1.0)
            except Exception:
                if all(not p.is_alive() for p in procs) and q.empty():
                    break
                continue
            if not ok:
                raise AssertionError(f"rank {r} failed:\n{v}")
            out[r] = v
        failed = False
    finally:
        for p in procs:
            # After a failure the other ranks may wait for the failed one: do not wait long.
            p.join(timeout=1.0 if failed else max(1.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
    return out


def _entry(fn, rank, world, store, args, env, q):
    os.environ.update(env)
    try:
        import torch

        torch.set_num_threads(1)
        q.put((rank, True, fn(rank, world, store, *args)))
    except BaseException:
        q.put((rank, False, traceback.format_exc()))


def _init(rank, world, store, backend="fanin"):
    import torch.distributed as dist

    import fanin.torch  # noqa: F401  (registers the backend)

    dist.init_process_group(backend=backend, init_method=f"file://{store}", rank=rank, world_size=world)
    return dist


def int_and_odd(rank, world, store):
    """int32 all_reduce exact at full int32 range; float32 of an odd length within the bound."""
    import numpy as np
    import torch

    from fanin import _native

    dist = _init(rank, world, store)
    n = 1000  # not a multiple of the 256 elements of a packet
    lim = (2**31 - 1) // world
    ints = [np.random.default_rng(100 + r).integers(-lim, lim, n, dtype=np.int64) for r in range(world)]
    t = torch.from_numpy(ints[rank].astype(np.int32))
    dist.all_reduce(t)
    exact = sum(ints)
    int_ok = bool((t.numpy().astype(np.int64) == exact).all())
    assert int(np.abs(exact).max()) > 2**24, "the int test must exceed float32's exact range"

    xs = [np.random.default_rng(200 + r).standard_normal(n + 37).astype(np.float32) for r in range(world)]
    g = dist.distributed_c10d._get_default_group()._fanin_group
    buf = xs[rank].copy()
    e = g.run(buf)
    exact = np.sum([x.astype(np.float64) for x in xs], axis=0)
    bound = np.array([_native.result_bound_of(world, e, float(r)) for r in buf])
    worst = float((np.abs(buf - exact) / bound).max())
    dist.destroy_process_group()
    return {"int_ok": int_ok, "worst": worst, "e": e}


def _mlp(seed):
    import torch

    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))


def ddp(rank, world, store, hook, steps):
    """A small MLP trained with DDP over fanin and, side by side, over gloo."""
    import copy

    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    import fanin.torch as ft

    dist = _init(rank, world, store)
    gloo = dist.new_group(backend="gloo")
    base = _mlp(0)
    mf = DDP(copy.deepcopy(base), process_group=None)
    if hook:
        mf.register_comm_hook(None, ft.allreduce_hook)
    mg = DDP(copy.deepcopy(base), process_group=gloo)
    local = copy.deepcopy(base)
    of = torch.optim.SGD(mf.parameters(), lr=0.2)
    og = torch.optim.SGD(mg.parameters(), lr=0.2)
    # Synthetic regression: y = tanh(x·w/2) with a fixed w, each rank its own batches.
    gen = torch.Generator().manual_seed(1234 + rank)
    w = torch.linspace(-1, 1, 16)
    worst = 0.0
    losses = []
    for _ in range(steps):
        x = torch.randn(32, 16, generator=gen)
        y = torch.tanh(x @ w / 2).unsqueeze(1)
        for m, o in ((mf, of), (mg, og)):
            o.zero_grad()
            loss = torch.nn.functional.mse_loss(m(x), y)
            loss.backward()
        losses.append(float(loss.detach()))
        # gloo's average of the local gradients at the fanin model's parameters.
        local.load_state_dict(mf.module.state_dict())
        local.zero_grad()
        torch.nn.functional.mse_loss(local(x), y).backward()
        m_loc = torch.tensor([max(float(p.grad.abs().max()) for p in local.parameters())])
        dist.all_reduce(m_loc, op=dist.ReduceOp.MAX, group=gloo)
        for p in local.parameters():
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG, group=gloo)
        # Each of `world` local values is at most m; the agreed exponent e keeps world·m·2^e
        # below 2^31 and is within one of the largest such, so a sum is off by at most
        # world·2^-(e+1) ≤ world²·m·2^-30, the average by world·m·2^-30; plus float32
        # rounding of both averages.
        tol = world * float(m_loc) * 2.0**-30 + 4 * world * 2.0**-24 * float(m_loc) + 1e-12
        for pf, pl in zip(mf.parameters(), local.parameters()):
            worst = max(worst, float((pf.grad - pl.grad).abs().max()) / tol)
        of.step()
        og.step()
    with torch.no_grad():
        pdiff = max(float((pf - pg).abs().max()) for pf, pg in zip(mf.parameters(), mg.parameters()))
    through = dist.distributed_c10d._get_default_group()._fanin_group.completed
    dist.destroy_process_group()
    return {"worst": worst, "pdiff": pdiff, "losses": losses, "through_switch": through}


def killed(rank, world, store):
    """Allreduces in a loop; the last rank dies at step 5; the others must raise in time."""
    import torch

    dist = _init(rank, world, store)
    t = torch.ones(5000)
    for step in range(50):
        if rank == world - 1 and step == 5:
            os._exit(0)
        start = time.monotonic()
        try:
            dist.all_reduce(t)
        except RuntimeError as e:
            return {"step": step, "secs": time.monotonic() - start, "error": str(e)}
        t.fill_(1.0)
    return {"step": None}


def delegated(rank, world, store, strict):
    """broadcast, all_gather, barrier and MAX all_reduce go to gloo (or raise if strict)."""
    import torch

    dist = _init(rank, world, store)
    if strict:
        try:
            dist.broadcast(torch.zeros(3), src=0)
        except Exception as e:
            msg = str(e)
        else:
            msg = None
        t = torch.full((3,), float(rank + 1))
        dist.all_reduce(t)
        return {"strict_error": msg, "sum": t.tolist()}
    t = torch.full((4,), float(rank)) if rank else torch.arange(4.0) + 7
    dist.broadcast(t, src=0)
    outs = [torch.zeros(2, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(outs, torch.tensor([rank, rank * 10]))
    dist.barrier()
    m = torch.tensor([float(rank)])
    dist.all_reduce(m, op=dist.ReduceOp.MAX)
    a = torch.full((10,), float(rank + 1))
    dist.all_reduce(a, op=dist.ReduceOp.AVG)
    through = dist.distributed_c10d._get_default_group()._fanin_group.completed
    dist.destroy_process_group()
    return {"through_switch": through, "bcast": t.tolist(), "gather": [o.tolist() for o in outs], "max": float(m), "avg": a.tolist()}


def external(rank, world, store):
    """int32 and float32 sums through an external fanin switchd (FANIN_SWITCH)."""
    import torch

    dist = _init(rank, world, store)
    t = torch.arange(300, dtype=torch.int32) * (rank + 1)
    dist.all_reduce(t)
    f = torch.full((500,), 0.25 * (rank + 1))
    dist.all_reduce(f, op=dist.ReduceOp.AVG)
    through = dist.distributed_c10d._get_default_group()._fanin_group.completed
    dist.destroy_process_group()
    return {"int": t.tolist(), "avg": f.tolist(), "through_switch": through}


def placed(rank, world, store):
    """int32 and float32 sums through pre-configured switchd processes (FANIN_ASSIGNMENT)."""
    import numpy as np
    import torch

    from fanin import _native

    dist = _init(rank, world, store)
    g = dist.distributed_c10d._get_default_group()._fanin_group
    n = 1000  # not a multiple of the 64 elements of a placed job's packet
    lim = (2**31 - 1) // world
    ints = [np.random.default_rng(300 + r).integers(-lim, lim, n, dtype=np.int64) for r in range(world)]
    t = torch.from_numpy(ints[rank].astype(np.int32))
    dist.all_reduce(t)
    int_ok = bool((t.numpy().astype(np.int64) == sum(ints)).all())
    xs = [np.random.default_rng(400 + r).standard_normal(n + 37).astype(np.float32) for r in range(world)]
    buf = xs[rank].copy()
    e = g.run(buf)
    exact = np.sum([x.astype(np.float64) for x in xs], axis=0)
    bound = np.array([_native.result_bound_of(world, e, float(r)) for r in buf])
    worst = float((np.abs(buf - exact) / bound).max())
    # A second allreduce of the same job gets a fresh session (new block ids) and its own sum.
    t2 = torch.full((70,), rank + 1, dtype=torch.int32)
    dist.all_reduce(t2)
    out = {
        "int_ok": int_ok,
        "worst": worst,
        "e": e,
        "second": t2.tolist(),
        "switch": g.switch,
        "child": g.child,
        "through_switch": g.completed,
    }
    dist.destroy_process_group()
    return out


def concurrent(rank, world, store, ops):
    """``ops`` async int32 all_reduces issued at once (lanes run them concurrently), then the
    same again as DDP-style futures; every sum exact."""
    import torch

    dist = _init(rank, world, store)
    g = dist.distributed_c10d._get_default_group()._fanin_group
    n = 60_000
    ts = [torch.arange(n, dtype=torch.int32) * (k + 1) + rank for k in range(ops)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    for w in works:
        w.wait()
    want = [torch.arange(n, dtype=torch.int64) * (k + 1) * world + world * (world - 1) // 2 for k in range(ops)]
    exact = all(bool((t.to(torch.int64) == x).all()) for t, x in zip(ts, want))
    # Again through futures (the DDP hook's path), float32 averages.
    import fanin.torch as ft

    fs = [torch.full((20_000,), float(rank + k)) for k in range(ops)]
    futs = [ft.allreduce_future(g, f, average=True) for f in fs]
    torch.futures.wait_all(futs)
    avg_ok = all(bool((f - (k + (world - 1) / 2)).abs().max() < 1e-5) for k, f in enumerate(fs))
    out = {"exact": exact, "avg_ok": avg_ok, "lanes": g.lanes, "max_in_flight": g.max_in_flight, "completed": g.completed}
    dist.destroy_process_group()
    return out


def split(rank, world, store):
    """Allreduces longer than FANIN_CHUNK, split across the lanes: int32 sums exact (sync and
    as futures, interleaved with an unsplit one), float32 within the bound of the returned
    exponent (the smallest of the pieces'), each call counted once."""
    import numpy as np
    import torch

    import fanin
    import fanin.torch as ft

    dist = _init(rank, world, store)
    g = dist.distributed_c10d._get_default_group()._fanin_group
    n = 10_037
    big = (2**31 - 1) // world
    t = (torch.arange(n, dtype=torch.int64) * 7919 % big).to(torch.int32) + rank
    want = (torch.arange(n, dtype=torch.int64) * 7919 % big) * world + world * (world - 1) // 2
    dist.all_reduce(t)
    exact = bool((t.to(torch.int64) == want).all())
    # Futures: a split one, an unsplit one, a split one, all in flight at once.
    ts = [torch.full((m,), k + rank, dtype=torch.int32) for k, m in enumerate((5_000, 300, 4_000))]
    futs = [ft.allreduce_future(g, x) for x in ts]
    torch.futures.wait_all(futs)
    exact_futures = all(bool((x == world * k + world * (world - 1) // 2).all()) for k, x in enumerate(ts))
    # float32 whose pieces have different magnitudes (so different exponents).
    x = np.full(n, 0.001 * (rank + 1), dtype=np.float32)
    x[:100] = 1000.0 * (rank + 1)
    exact_sum = x.astype(np.float64) / (rank + 1) * world * (world + 1) / 2
    e = g.run(fanin._as_buffer(x))
    bound = np.array([fanin._native.result_bound_of(world, e, float(r)) for r in x])
    worst = float((np.abs(x - exact_sum) / bound).max())
    out = {"exact": exact, "exact_futures": exact_futures, "worst": worst, "e": e, "chunk": g.chunk,
           "completed": g.completed, "pieces": g.pieces, "max_in_flight": g.max_in_flight}
    dist.destroy_process_group()
    return out
