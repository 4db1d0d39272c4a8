"""fanin's Python package against real torch on CPU: DDP vs gloo, exact int32 sums, odd
lengths, a dead rank, delegated collectives and argument errors."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import _workers as w  # noqa: E402

import fanin  # noqa: E402


@pytest.mark.parametrize("world", [2, 4])
def test_int32_exact_and_odd_length_float_within_bound(world):
    res = w.launch(w.int_and_odd, world)
    for r, v in res.items():
        assert v["int_ok"], f"rank {r}: int32 sums differ from the exact ones"
        assert v["worst"] <= 1.0, f"rank {r}: float error {v['worst']:.3f}x the bound (e={v['e']})"
    assert len({v["e"] for v in res.values()}) == 1, "ranks used different exponents"


@pytest.mark.parametrize("world,hook", [(2, False), (4, True)])
def test_ddp_matches_gloo(world, hook):
    steps = 50
    res = w.launch(w.ddp, world, args=(hook, steps))
    for r, v in res.items():
        # Every step's averaged gradient within the quantisation bound of gloo's average.
        # Every step's buckets went through the switch, not gloo.
        assert v["through_switch"] >= steps, f"rank {r}: only {v['through_switch']} allreduces via fanin"
        assert v["worst"] <= 1.0, f"rank {r}: gradient error {v['worst']:.3f}x the bound"
        # After 50 SGD steps the fanin and gloo models agree to 1e-5.
        assert v["pdiff"] <= 1e-5, f"rank {r}: parameters differ from gloo's by {v['pdiff']:.3g}"
        first, last = np.mean(v["losses"][:5]), np.mean(v["losses"][-5:])
        assert last < 0.7 * first, f"rank {r}: loss went from {first:.4f} to {last:.4f}"
    print("loss curve (rank 0):", " ".join(f"{x:.3f}" for x in res[0]["losses"][::5]))


def test_killed_rank_others_raise_within_timeout():
    res = w.launch(w.killed, 3, env={"FANIN_TIMEOUT": "3"}, timeout=120)
    assert 2 not in res
    for r in (0, 1):
        v = res[r]
        assert v["step"] == 5, f"rank {r}: failed at step {v['step']}, not at the dead rank's step 5"
        assert v["secs"] <= 3 + 1.5, f"rank {r}: raised after {v['secs']:.1f}s with a 3s timeout"
        assert "timed out" in v["error"] or "no ACCEPT" in v["error"], v["error"]


def test_delegated_collectives():
    res = w.launch(w.delegated, 3, args=(False,))
    for r, v in res.items():
        assert v["bcast"] == [7.0, 8.0, 9.0, 10.0]
        assert v["gather"] == [[k, 10 * k] for k in range(3)]
        assert v["max"] == 2.0
        assert v["avg"] == pytest.approx([2.0] * 10, abs=1e-6)
        assert v["through_switch"] == 1, "only the float32 AVG goes through the switch"


def test_strict_refuses_delegation():
    res = w.launch(w.delegated, 2, args=(True,), env={"FANIN_STRICT": "1"})
    for v in res.values():
        assert v["strict_error"] is not None and "broadcast" in v["strict_error"]
        assert v["sum"] == pytest.approx([3.0] * 3, abs=1e-6)


def test_bad_arguments_raise_clear_errors():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="float32 or int32"):
        fanin.allreduce(np.zeros(4, dtype=np.float64))
    with pytest.raises(ValueError, match="contiguous"):
        fanin.allreduce(np.zeros((4, 4), dtype=np.float32)[:, 1])
    ro = np.zeros(4, dtype=np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        fanin.allreduce(ro)
    with pytest.raises(ValueError, match="CPU"):
        fanin.allreduce(torch.zeros(4, device="meta"))
    with pytest.raises(TypeError, match="float32 or int32"):
        fanin.allreduce(torch.zeros(4, dtype=torch.float16))
    with pytest.raises(ValueError, match="contiguous"):
        fanin.allreduce(torch.zeros(4, 4).t())
    with pytest.raises(ValueError, match="timeout"):
        fanin.allreduce(np.zeros(4, dtype=np.float32), timeout=-1)
    with pytest.raises(TypeError, match="numpy array or torch tensor"):
        fanin.allreduce([1.0, 2.0])
    with pytest.raises(ValueError, match="no fanin switch"):
        fanin.allreduce(np.zeros(4, dtype=np.float32))


def test_unreachable_switch_raises_cli_message():
    """A lone worker whose switch does not exist fails with the CLI's line, in time."""
    import time

    from fanin import _native

    sw = _native.Worker("127.0.0.1:0")
    dead = _native.Worker("127.0.0.1:0").address  # a bound port where no switch listens
    g = fanin._Group(sw, dead, 0, 2, 1, 64, 8, 1.0)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="no ACCEPT from the switch") as e:
        fanin.allreduce(np.ones(10, dtype=np.float32), switch=g, timeout=1.0)
    assert isinstance(e.value, _native.FaninError)
    assert time.monotonic() - start < 2.5
    g.close()


def _free_port():
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u, socket.socket() as t:
        for _ in range(50):
            u.bind(("127.0.0.1", 0))
            port = u.getsockname()[1]
            try:
                t.bind(("127.0.0.1", port))
                return port
            except OSError:
                u.close()
                u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    raise RuntimeError("no free port")


def test_external_switchd_register():
    """FANIN_SWITCH: rank 0 replaces switchd's placeholder job 9 (3 workers at unused
    addresses) with the real workers through the control port, and removes it at the end."""
    import subprocess
    import time

    binary = os.environ.get("FANIN_BIN") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "target", "debug", "fanin"
    )
    assert os.path.exists(binary), f"no fanin binary at {binary}: build it (cargo build -p fanin) or set FANIN_BIN"
    port = _free_port()
    sw = subprocess.Popen(
        [binary, "switchd", "--listen", f"127.0.0.1:{port}", "--job", "9", "--slots", "64"]
        + [a for k in range(3) for a in ("--worker", f"127.0.0.1:{9 + k}")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(1.0)
        assert sw.poll() is None, sw.stderr.read().decode()
        env = {"FANIN_SWITCH": f"127.0.0.1:{port}", "FANIN_JOB": "9", "FANIN_SLOTS": "64", "FANIN_ELEMENTS": "64"}
        res = w.launch(w.external, 3, env=env)
        for v in res.values():
            assert v["int"] == [6 * k for k in range(300)]
            assert v["avg"] == pytest.approx([0.5] * 500, abs=1e-6)
            assert v["through_switch"] == 2
    finally:
        sw.kill()
        err = sw.communicate()[1].decode()
    assert "job 9" in err, err  # switchd logged the register (and remove)
