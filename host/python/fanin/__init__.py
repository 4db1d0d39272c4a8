"""fanin: allreduce through a fanin in-network aggregation switch.

``fanin.allreduce`` sums a numpy array or CPU torch tensor in place with the other workers of
a job; ``import fanin.torch`` registers the ``"fanin"`` torch.distributed backend. See
docs/python.md.
"""

from __future__ import annotations

import math
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

from . import _native

__all__ = ["allreduce", "assignment_group"]

#: Default seconds an allreduce may take before it raises.
DEFAULT_TIMEOUT = 30.0
#: Elements per packet of the embedded switch's job (FANIN_ELEMENTS overrides it).
DEFAULT_ELEMENTS = 256
#: Elements per packet with an external switch (FANIN_SWITCH): `fanin switchd --elements`'s
#: default, the largest packet such a switchd takes unless started with more.
SWITCHD_ELEMENTS = 64
#: Slots of the embedded switch's job, the workers' window (FANIN_SLOTS overrides it).
DEFAULT_SLOTS = 128
#: Concurrent allreduces (lanes: one job each) of an embedded-switch group (FANIN_LANES).
DEFAULT_LANES = 2
#: Elements per piece when a group with several lanes splits a larger allreduce across
#: them (FANIN_CHUNK; 0: never split).
DEFAULT_CHUNK = 1 << 18


class _Group:
    """One worker's place in one fanin job: the switch and one or more lanes. Lane k is job
    ``job + k`` with its own UDP socket (``worker`` may be a list of them) and its own thread;
    a job has one session at a time, so a lane runs its allreduces one after another, while
    the lanes run theirs concurrently. Allreduces go to the lanes in turn, in call order:
    every rank must issue them in the same order (as for any collective). With several lanes,
    an allreduce of more than ``chunk`` elements is split into pieces of ``chunk`` that go to
    the lanes in turn, so one piece's preparation overlaps another's transfer."""

    def __init__(self, worker, switch, rank, world, job, elements, slots, timeout, owned=None, child=None, session=True):
        self.workers = list(worker) if isinstance(worker, (list, tuple)) else [worker]
        self.worker = self.workers[0]
        self.lanes = len(self.workers)
        self.switch = switch
        self.rank = rank
        self.world = world
        self.job = job
        self.elements = elements
        self.slots = slots
        self.timeout = timeout
        #: The worker's child index at its parent switch (the rank, unless a placement says otherwise).
        self.child = rank if child is None else child
        self.session = session
        #: Blocks in flight (FANIN_WINDOW; default and at most the job's slots) and the
        #: retransmission timeout (FANIN_RETRANSMIT_MS, default 20). Keep the window's bytes
        #: well below what the slowest link carries in one retransmission timeout.
        self.window = _env_int("FANIN_WINDOW", slots)
        self.retransmit_ms = _env_int("FANIN_RETRANSMIT_MS", 20)
        if self.window < 1 or self.retransmit_ms < 1:
            raise ValueError(f"FANIN_WINDOW ({self.window}) and FANIN_RETRANSMIT_MS ({self.retransmit_ms}) must be at least 1")
        #: Elements per piece of a split allreduce (FANIN_CHUNK, a multiple of the elements
        #: per packet; 0: never split). Only groups with several lanes split.
        self.chunk = _env_int("FANIN_CHUNK", DEFAULT_CHUNK)
        if self.chunk < 0:
            raise ValueError(f"FANIN_CHUNK={self.chunk} must be 0 (never split) or a number of elements")
        if self.chunk:
            self.chunk = max(elements, self.chunk // elements * elements)
        self._owned = owned  # the embedded _native.Switch, on rank 0
        self._pools = [
            ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"fanin-job{job + k}") for k in range(self.lanes)
        ]
        self._lane_locks = [threading.Lock() for _ in range(self.lanes)]
        self._lock = threading.Lock()
        self._next = 0
        self._in_flight = 0
        #: Allreduces this worker has completed through the switch.
        self.completed = 0
        #: Allreduces sent to the switch: one per unsplit allreduce, one per piece of a split one.
        self.pieces = 0
        #: The most allreduces (or pieces) that were in flight at once.
        self.max_in_flight = 0

    def _lane(self) -> int:
        with self._lock:
            k = self._next
            self._next = (k + 1) % self.lanes
            return k

    def _run_on(self, lane, buf, job, timeout, count=True) -> int:
        with self._lane_locks[lane]:
            with self._lock:
                self._in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self._in_flight)
            try:
                e = self.workers[lane].allreduce(
                    buf,
                    self.switch,
                    self.job + lane if job is None else job,
                    self.rank,
                    self.world,
                    self.elements,
                    self.slots,
                    self.timeout if timeout is None else timeout,
                    window=min(self.window, self.slots),
                    child=self.child,
                    session=self.session,
                    retransmit_ms=self.retransmit_ms,
                )
            finally:
                with self._lock:
                    self._in_flight -= 1
            with self._lock:
                self.pieces += 1
                self.completed += 1 if count else 0
            return e

    def _pieces(self, buf, job):
        """``buf`` split for the lanes, or None when it goes whole to one lane."""
        if self.lanes < 2 or job is not None or not self.chunk or len(buf) <= self.chunk:
            return None
        return [buf[i:i + self.chunk] for i in range(0, len(buf), self.chunk)]

    def _split(self, pieces, timeout) -> Future:
        """Queues each piece on the next lane; the Future gives the smallest exponent of the
        pieces (the loosest error bound, valid for every element) once all are summed, or
        the first failure. The timeout is the whole call's, counted from its first piece's
        start: a later piece gets what is left of it."""
        out = Future()
        left = [len(pieces)]
        exps = []
        lock = threading.Lock()
        total = self.timeout if timeout is None else timeout
        started = []

        def piece(lane, buf):
            with lock:
                if not started:
                    started.append(time.monotonic())
                rest = total - (time.monotonic() - started[0])
            if out.done():  # another piece failed: do not start this one
                raise _native.FaninError("an earlier piece of this allreduce failed")
            if rest <= 0:
                raise _native.FaninError(
                    f"timed out after {total:.1f}s: the split allreduce of job {self.job} (rank {self.rank} of "
                    f"{self.world}) did not finish")
            return self._run_on(lane, buf, None, rest, False)

        def done(f):
            e = f.exception()
            with lock:
                left[0] -= 1
                if e is not None:
                    if not out.done():
                        out.set_exception(e)
                    return
                exps.append(f.result())
                if left[0] == 0 and not out.done():
                    with self._lock:
                        self.completed += 1
                    out.set_result(min(exps))

        with self._lock:  # consecutive lanes for the pieces of one call, as on every rank
            lanes = []
            for _ in pieces:
                lanes.append(self._next)
                self._next = (self._next + 1) % self.lanes
        for lane, buf in zip(lanes, pieces):
            self._pools[lane].submit(piece, lane, buf).add_done_callback(done)
        return out

    def run(self, buf, job=None, timeout=None) -> int:
        """Sums the contiguous float32/int32 numpy view ``buf`` in place on the next lane
        (``job`` overrides its job id), split across the lanes if longer than ``chunk``;
        returns the exponent (of a split one: the smallest of its pieces')."""
        pieces = self._pieces(buf, job)
        if pieces is not None:
            return self._split(pieces, timeout).result()
        return self._run_on(self._lane(), buf, job, timeout)

    def submit(self, buf, timeout=None) -> Future:
        """Queues ``run(buf)`` on the next lane's thread (split across the lanes if longer
        than ``chunk``)."""
        pieces = self._pieces(buf, None)
        if pieces is not None:
            return self._split(pieces, timeout)
        lane = self._lane()
        return self._pools[lane].submit(self._run_on, lane, buf, None, timeout)

    def close(self):
        for p in self._pools:
            p.shutdown(wait=True)
        if self._owned is not None:
            self._owned.close()
            self._owned = None


def _check_timeout(timeout):
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout}")
    return float(timeout)


def _as_buffer(array):
    """The writable, contiguous float32/int32 numpy view of ``array``, or a clear error."""
    import numpy as np

    mod = type(array).__module__
    if mod.startswith("torch"):
        import torch

        if not isinstance(array, torch.Tensor):
            raise TypeError(f"fanin.allreduce takes a numpy array or torch tensor, not {type(array).__name__}")
        if array.device.type != "cpu":
            raise ValueError(f"fanin.allreduce takes CPU tensors; this one is on {array.device}: move it with .cpu()")
        if array.dtype not in (torch.float32, torch.int32):
            raise TypeError(f"fanin.allreduce sums float32 or int32 tensors, not {array.dtype}")
        if not array.is_contiguous():
            raise ValueError("fanin.allreduce needs a contiguous tensor: pass tensor.contiguous() and copy back")
        return array.detach().numpy().reshape(-1)
    if not isinstance(array, np.ndarray):
        raise TypeError(f"fanin.allreduce takes a numpy array or torch tensor, not {type(array).__name__}")
    if array.dtype not in (np.float32, np.int32):
        raise TypeError(f"fanin.allreduce sums float32 or int32 arrays, not {array.dtype}")
    if not array.flags.c_contiguous:
        raise ValueError("fanin.allreduce needs a C-contiguous array: pass np.ascontiguousarray(a) and copy back")
    if not array.flags.writeable:
        raise ValueError("fanin.allreduce sums in place: the array is read-only")
    return array.reshape(-1)


def _group_of(switch):
    if isinstance(switch, _Group):
        return switch
    g = getattr(switch, "_fanin_group", None)
    if g is not None:
        return g
    if switch is None:
        try:
            import torch.distributed as dist

            if dist.is_initialized():
                g = getattr(dist.distributed_c10d._get_default_group(), "_fanin_group", None)
                if g is not None:
                    return g
        except ImportError:
            pass
        raise ValueError(
            "no fanin switch: call torch.distributed.init_process_group(backend='fanin') "
            "after `import fanin.torch`, or pass switch=<a fanin process group>"
        )
    raise TypeError(f"switch must be a fanin process group or None, not {type(switch).__name__}")


def allreduce(array, *, switch=None, job=None, timeout=DEFAULT_TIMEOUT):
    """Sums ``array`` (contiguous numpy array or CPU torch tensor, float32 or int32) in place
    with every worker of the job, through the switch of ``switch`` (a fanin process group;
    None: the default torch.distributed group). float32 is quantised: each result ``r`` is
    within ``workers·2^-(e+1) + 2^-24·|r|`` of the exact sum; int32 sums are exact. Returns
    ``array``. Raises ``fanin._native.FaninError`` (a RuntimeError) on failure, never later
    than ``timeout`` seconds."""
    timeout = _check_timeout(timeout)
    if job is not None and (isinstance(job, bool) or not isinstance(job, int) or not 0 <= job < 65536):
        raise ValueError(f"job must be an integer in 0..65535, not {job!r}")
    buf = _as_buffer(array)
    g = _group_of(switch)
    g.run(buf, job=job, timeout=timeout)
    return array


def assignment_group(path, rank, *, world=None, job=None, timeout=DEFAULT_TIMEOUT):
    """A worker placed by ``fanin place --emit-config``: reads ``path`` (its ``workers.json``),
    takes the assignment of ``rank`` (of ``job``; None: the file's only job), binds the
    assignment's own address and returns a group for ``allreduce(..., switch=group)`` that
    sends to the assigned parent switch, which must already hold the job (no registration).
    ``world``, if given, must equal the job's number of workers. Raises ``OSError`` for an
    unreadable file and ``ValueError`` naming what is wrong in it."""
    timeout = _check_timeout(timeout)
    a = _native.read_assignment(os.fspath(path), rank, world, job)
    try:
        worker = _native.Worker(a["me"])
    except _native.FaninError as e:
        raise _native.FaninError(f"{e} (the address of rank {rank} in {os.fspath(path)})") from None
    return _Group(
        worker, a["parent"], a["rank"], a["workers"], a["job"], a["elements"], a["window_limit"], timeout,
        child=a["child"], session=a["session"],
    )


def _env_int(name, default):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"{name}={v!r} is not an integer") from None


def _host():
    return os.environ.get("FANIN_HOST", "127.0.0.1")
