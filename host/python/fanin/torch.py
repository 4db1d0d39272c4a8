"""The ``"fanin"`` torch.distributed backend and a DDP comm hook.

``import fanin.torch`` registers the backend; ``dist.init_process_group(backend="fanin")``
then sends every float32/int32 SUM or AVG ``all_reduce`` through a fanin switch. Every other
collective (and dtype, and op) goes to a gloo group created alongside, unless
``FANIN_STRICT=1``, which makes them raise instead.

Switch: with no ``FANIN_SWITCH``, rank 0 runs the software switch in this process; ranks
swap their UDP addresses through the torch store. With ``FANIN_SWITCH=host:port`` rank 0
registers the job at that external ``fanin switchd`` (its control port) instead. With
``FANIN_ASSIGNMENT=workers.json`` (``fanin place --emit-config``) each rank takes its own
assignment and sends to its pre-configured parent switch: no embedded switch, no registration.
``FANIN_HOST`` is the IPv4 address the sockets bind (127.0.0.1 by default). ``FANIN_LANES``
allreduces run concurrently, each lane its own job (docs/python.md, "Concurrency").
"""

import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup, ReduceOp, Work

import fanin
from fanin import _native

__all__ = ["FaninProcessGroup", "allreduce_hook"]


class _FutureWork(Work):
    """A Work that completes with a torch Future."""

    def __init__(self, fut: torch.futures.Future):
        super().__init__()
        self._fut = fut

    def wait(self, timeout: timedelta = timedelta(0)) -> bool:
        self._fut.wait()
        return True

    def get_future(self) -> torch.futures.Future:
        return self._fut


def _strict() -> bool:
    return os.environ.get("FANIN_STRICT", "") == "1"


class FaninProcessGroup(ProcessGroup):
    """A process group whose float32/int32 SUM/AVG all_reduce goes through a fanin switch."""

    def __init__(self, store, rank: int, world: int, timeout: timedelta):
        super().__init__(rank, world)
        secs = timeout.total_seconds() if timeout else fanin.DEFAULT_TIMEOUT
        secs = float(os.environ.get("FANIN_TIMEOUT", min(secs, fanin.DEFAULT_TIMEOUT)))
        if world > 64:
            raise ValueError(f"a fanin job has at most 64 workers; this group has {world}")
        external = os.environ.get("FANIN_SWITCH") or None
        # An external switchd takes packets of at most its `--elements` (64 by default):
        # larger ones would be dropped as malformed and the allreduce would only time out.
        elements = fanin._env_int("FANIN_ELEMENTS", fanin.SWITCHD_ELEMENTS if external else fanin.DEFAULT_ELEMENTS)
        slots = fanin._env_int("FANIN_SLOTS", fanin.DEFAULT_SLOTS)
        job = fanin._env_int("FANIN_JOB", 1)
        placed = os.environ.get("FANIN_ASSIGNMENT") or None
        self._registered = None
        self._gloo = None if _strict() else dist.ProcessGroupGloo(dist.PrefixStore("gloo", store), rank, world, timeout)
        self._world = world
        if placed:
            if external:
                raise ValueError("FANIN_SWITCH and FANIN_ASSIGNMENT are both set: unset one")
            if fanin._env_int("FANIN_LANES", 1) != 1:
                raise ValueError("FANIN_LANES needs a job per lane; a placement's workers.json gives one: unset FANIN_LANES")
            job = fanin._env_int("FANIN_JOB", None)
            try:
                self._fanin_group = fanin.assignment_group(placed, rank, world=world, job=job, timeout=secs)
            except ValueError as e:
                raise ValueError(f"FANIN_ASSIGNMENT: {e}") from None
            return
        # Lanes: concurrent allreduces, one job each (job, job + 1, ...) with its own slots.
        lanes = fanin._env_int("FANIN_LANES", 1 if external else fanin.DEFAULT_LANES)
        if not 1 <= lanes <= 16:
            raise ValueError(f"FANIN_LANES={lanes} must be 1 to 16")
        if job + lanes > 65536:
            raise ValueError(f"FANIN_JOB={job} with FANIN_LANES={lanes} runs past job id 65535")
        host = fanin._host()
        workers = [_native.Worker(f"{host}:0") for _ in range(lanes)]
        store.set(f"fanin/worker/{rank}", ",".join(w.address for w in workers))
        owned = None
        if rank == 0:
            addrs = [store.get(f"fanin/worker/{r}").decode().split(",") for r in range(world)]
            if external:
                # The job entries go to the external switchd's control port; refusals raise.
                base = fanin._env_int("FANIN_SLOT_BASE", 0)
                for k in range(lanes):
                    _native.register_job(external, [a[k] for a in addrs], job + k, elements, slots, base + k * slots)
                    self._registered = external
                store.set("fanin/switch", external)
            else:
                lane_major = [a[k] for k in range(lanes) for a in addrs]
                owned = _native.Switch(f"{host}:0", lane_major, job, elements, slots, lanes)
                store.set("fanin/switch", owned.address)
        switch = store.get("fanin/switch").decode()
        self._fanin_group = fanin._Group(workers, switch, rank, world, job, elements, slots, secs, owned)

    def getBackendName(self) -> str:
        return "fanin"

    @property
    def switch_address(self) -> str:
        """The switch this group sends to."""
        return self._fanin_group.switch

    def _fanin_ok(self, tensors, op) -> bool:
        return (
            len(tensors) == 1
            and op in (ReduceOp.SUM, ReduceOp.AVG)
            and tensors[0].device.type == "cpu"
            and tensors[0].dtype in (torch.float32, torch.int32)
            and not (op == ReduceOp.AVG and tensors[0].dtype == torch.int32)
        )

    def allreduce(self, tensors, opts=None):
        """SUM/AVG of one float32/int32 CPU tensor through the switch; the rest via gloo."""
        if opts is None or isinstance(opts, (ReduceOp, ReduceOp.RedOpType)):
            o = dist.AllreduceOptions()
            o.reduceOp = ReduceOp(opts if opts is not None else ReduceOp.SUM)
            opts = o
        # A ReduceOp object compares equal to its RedOpType, but not the other way round.
        op = getattr(opts.reduceOp, "op", opts.reduceOp)
        if not self._fanin_ok(tensors, op):
            return self._delegate("allreduce", tensors, opts)
        fut = allreduce_future(self._fanin_group, tensors[0], op == ReduceOp.AVG)
        return _FutureWork(fut.then(lambda f: [f.value()]))

    def _delegate(self, name, *args, **kwargs):
        if self._gloo is None:
            raise RuntimeError(
                f"fanin: {name} is not done by the switch, and FANIN_STRICT=1 forbids delegating it to gloo"
            )
        return getattr(self._gloo, name)(*args, **kwargs)

    def shutdown(self):
        """Stops the job's thread and, on rank 0, the embedded switch (or removes the job
        from the external switchd)."""
        self._fanin_group.close()
        if self._registered:
            g = self._fanin_group
            for k in range(g.lanes):
                _native.register_job(self._registered, [], g.job + k, g.elements, g.slots, remove=True)
            self._registered = None


def _delegated(name):
    def f(self, *args, **kwargs):
        return self._delegate(name, *args, **kwargs)

    f.__name__ = name
    f.__doc__ = f"{name}: delegated to gloo (an error under FANIN_STRICT=1)."
    return f


for _name in [
    "allreduce_coalesced",
    "broadcast",
    "allgather",
    "_allgather_base",
    "allgather_coalesced",
    "allgather_into_tensor_coalesced",
    "gather",
    "scatter",
    "reduce",
    "reduce_scatter",
    "_reduce_scatter_base",
    "reduce_scatter_tensor_coalesced",
    "alltoall",
    "alltoall_base",
    "barrier",
    "send",
    "recv",
    "recv_anysource",
]:
    setattr(FaninProcessGroup, _name, _delegated(_name))


def allreduce_future(group, tensor: torch.Tensor, average: bool = False) -> torch.futures.Future:
    """Queues a fanin allreduce of ``tensor`` (in place) on ``group``'s job thread; the Future
    completes with the tensor (divided by the world size if ``average``)."""
    buf = fanin._as_buffer(tensor)
    fut = torch.futures.Future()
    world = group.world

    def done(cf):
        e = cf.exception()
        if e is not None:
            fut.set_exception(e)
            return
        if average:
            tensor.div_(world)
        fut.set_result(tensor)

    group.submit(buf).add_done_callback(done)
    return fut


def allreduce_hook(state, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """DDP comm hook: averages the bucket's gradients through the fanin switch of ``state``
    (a fanin process group; None: the default group)."""
    g = fanin._group_of(state)
    t = bucket.buffer()
    if t.dtype != torch.float32:
        raise TypeError(f"fanin.torch.allreduce_hook averages float32 gradients, not {t.dtype}")
    return allreduce_future(g, t, average=True)


def _create(store, rank, world, timeout):
    return FaninProcessGroup(store, rank, world, timeout)


if "FANIN" not in dist.Backend._plugins:
    dist.Backend.register_backend("fanin", _create, devices=["cpu"])
