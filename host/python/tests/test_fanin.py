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


def _check_ddp(res, steps):
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


@pytest.mark.parametrize("world,hook", [(2, False), (4, True)])
def test_ddp_matches_gloo(world, hook):
    steps = 50
    _check_ddp(w.launch(w.ddp, world, args=(hook, steps)), steps)


def _switchd(job=9):
    """A `fanin switchd` process with a placeholder job (3 workers at unused addresses)
    that the ranks replace through its control port; returns the process and its port."""
    import subprocess
    import time

    binary = os.environ.get("FANIN_BIN") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "target", "debug", "fanin"
    )
    assert os.path.exists(binary), f"no fanin binary at {binary}: build it (cargo build -p fanin) or set FANIN_BIN"
    port = _free_port()
    sw = subprocess.Popen(
        [binary, "switchd", "--listen", f"127.0.0.1:{port}", "--job", str(job), "--slots", "64"]
        + [a for k in range(3) for a in ("--worker", f"127.0.0.1:{9 + k}")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    time.sleep(1.0)
    assert sw.poll() is None, sw.stderr.read().decode()
    return sw, port


def test_ddp_through_external_switchd():
    """The DDP run above (2 processes, 50 steps, the DDP comm hook) with the switch a
    separate `fanin switchd` process (FANIN_SWITCH) instead of the embedded one."""
    sw, port = _switchd()
    try:
        # FANIN_ELEMENTS left to its default: it must fit the switchd's (64).
        env = {"FANIN_SWITCH": f"127.0.0.1:{port}", "FANIN_JOB": "9", "FANIN_SLOTS": "64"}
        _check_ddp(w.launch(w.ddp, 2, args=(True, 50), env=env), 50)
    finally:
        sw.kill()
        err = sw.communicate()[1].decode()
    assert "job 9" in err, err


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
    from fanin import _native

    wk = _native.Worker("127.0.0.1:0")
    with pytest.raises(ValueError, match="retransmission timeout"):
        wk.allreduce(np.zeros(4, np.float32), "127.0.0.1:9", 1, 0, 2, 64, 8, 1.0, retransmit_ms=0)
    # Static jobs stop at 64 workers (header version 1's bitmap); the message names the way on.
    cap = r"workers=65: the Python binding runs static jobs, which hold 1 to 64 workers \(header version 1's bitmap\); dynamic jobs of up to 512 ranks run with `fanin send --dynamic`"
    with pytest.raises(ValueError, match=cap):
        wk.allreduce(np.zeros(4, np.float32), "127.0.0.1:9", 1, 0, 65, 64, 8, 1.0)
    with pytest.raises(ValueError, match="rank 300 is not in a job of 64 workers"):
        wk.allreduce(np.zeros(4, np.float32), "127.0.0.1:9", 1, 300, 64, 64, 8, 1.0)
    os.environ["FANIN_WINDOW"] = "0"
    try:
        with pytest.raises(ValueError, match="FANIN_WINDOW"):
            fanin._Group(wk, "127.0.0.1:9", 0, 2, 1, 64, 8, 1.0)
    finally:
        del os.environ["FANIN_WINDOW"]


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
    sw, port = _switchd()
    try:
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


def _fanin_bin():
    binary = os.environ.get("FANIN_BIN") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "target", "debug", "fanin"
    )
    assert os.path.exists(binary), f"no fanin binary at {binary}: build it (cargo build -p fanin) or set FANIN_BIN"
    return binary


def _free_ports(k):
    """A base port P with P..P+k free for UDP and TCP on 127.0.0.1 (the placement's
    --base-port numbering)."""
    import random
    import socket

    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(20000, 60000 - k)
        held = []
        try:
            for p in range(base, base + k):
                for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
                    s = socket.socket(socket.AF_INET, kind)
                    held.append(s)
                    s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError(f"no {k} consecutive free ports")


def _place(tmp_path, tree, algo, nodes):
    """Runs `fanin place --emit-config` on ``tree`` (on 127.0.0.1 from a free base port);
    returns the emitted directory and the switch configuration files."""
    import json
    import subprocess

    topo = tmp_path / "tree.json"
    topo.write_text(json.dumps(tree))
    out = tmp_path / "cfg"
    subprocess.run(
        [_fanin_bin(), "place", "--topology", str(topo), "--algo", algo,
         "--emit-config", str(out), "--base-port", str(_free_ports(nodes)), "--slots", "16"],
        check=True, stdout=subprocess.DEVNULL,
    )
    return out, sorted(p for p in out.glob("*.json") if p.name != "workers.json")


def _run_placed(tmp_path, tree, algo, nodes, world, switches_expected):
    import json
    import subprocess
    import time

    out, configs = _place(tmp_path, tree, algo, nodes)
    assert len(configs) == switches_expected, [c.name for c in configs]
    procs = [
        subprocess.Popen([_fanin_bin(), "switchd", "--config", str(c)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for c in configs
    ]
    try:
        time.sleep(1.0)
        for p in procs:
            assert p.poll() is None, p.stderr.read().decode()
        res = w.launch(w.placed, world, env={"FANIN_ASSIGNMENT": str(out / "workers.json"), "FANIN_TIMEOUT": "20"})
    finally:
        for p in procs:
            p.kill()
            p.communicate()
    workers = json.loads((out / "workers.json").read_text())
    for r, v in res.items():
        mine = next(a for a in workers if a["rank"] == r)
        assert v["int_ok"], f"rank {r}: int32 sums differ from the exact ones"
        assert v["worst"] <= 1.0, f"rank {r}: float error {v['worst']:.3f}x the bound (e={v['e']})"
        assert v["second"] == [world * (world + 1) // 2] * 70
        assert v["switch"] == f"{mine['parent']['ip']}:{mine['parent']['udp_port']}"
        assert v["child"] == mine["child"]
        assert v["through_switch"] == 3
    assert len({v["e"] for v in res.values()}) == 1, "ranks used different exponents"
    return res


def test_assignment_one_switch(tmp_path):
    """FANIN_ASSIGNMENT: `fanin place --algo all-red` puts both workers under the job root
    (one switchd); 2 ranks get exact int32 sums and float32 sums within the bound."""
    tree = {"destination": "d", "nodes": [{"id": "s", "parent": "d", "rate": 1, "load": 2}]}
    _run_placed(tmp_path, tree, "all-red", 4, 2, 1)


def test_assignment_tree_of_switchds(tmp_path):
    """FANIN_ASSIGNMENT through a three-level tree of four switchd processes (all-blue: the
    root d, r, and leaves a with 2 workers and b with 1)."""
    tree = {
        "destination": "d",
        "nodes": [
            {"id": "r", "parent": "d", "rate": 1},
            {"id": "a", "parent": "r", "rate": 1, "load": 2},
            {"id": "b", "parent": "r", "rate": 1, "load": 1},
        ],
    }
    res = _run_placed(tmp_path, tree, "all-blue", 7, 3, 4)
    # The leaf a's two workers are its children 0 and 1; b's worker is its child 0.
    assert sorted(v["child"] for v in res.values()) == [0, 0, 1]


def test_assignment_errors(tmp_path):
    """Missing, malformed and mismatched assignment files raise one clear line each."""
    import json

    from fanin import _native

    def ep(port):
        return {"mac": [2, 0, 127, 0, 0, 1], "ip": "127.0.0.1", "udp_port": port, "port": 0}

    def asg(rank, workers=2, job=1):
        return {"job": job, "rank": rank, "workers": workers, "child": rank, "me": ep(40000 + rank),
                "parent": ep(39999), "window_limit": 16, "elements": 64}

    def write(name, value):
        p = tmp_path / name
        p.write_text(value if isinstance(value, str) else json.dumps(value))
        return p

    with pytest.raises(OSError, match="cannot read the assignment file .*nope.json"):
        fanin.assignment_group(tmp_path / "nope.json", 0)
    with pytest.raises(ValueError, match="is not JSON"):
        fanin.assignment_group(write("a.json", "[{"), 0)
    with pytest.raises(ValueError, match="assignment list .* is not valid: .*workers"):
        fanin.assignment_group(write("b.json", [{"job": 1, "rank": 0}]), 0)
    good = write("good.json", [asg(0), asg(1)])
    with pytest.raises(ValueError, match="has no assignment for rank 2"):
        fanin.assignment_group(good, 2)
    with pytest.raises(ValueError, match="has 2 workers, but this group has 3 ranks"):
        fanin.assignment_group(good, 0, world=3)
    with pytest.raises(ValueError, match="lists 1 of its 2 ranks"):
        fanin.assignment_group(write("c.json", [asg(0)]), 0)
    with pytest.raises(ValueError, match="lists rank 0 twice"):
        fanin.assignment_group(write("d.json", [asg(0), asg(0)]), 0)
    # A dynamic placement's workers.json (192 workers, ranks beyond 255): refused as static-only.
    wide = write("wide.json", [asg(r, 192) for r in range(192)])
    with pytest.raises(ValueError, match=r"has 192 workers: the Python binding runs static jobs, which hold 1 to 64"):
        fanin.assignment_group(wide, 0)
    two = write("e.json", [asg(0), asg(1), asg(0, 1, job=5)])
    with pytest.raises(ValueError, match=r"holds jobs \[1, 5\]: set FANIN_JOB"):
        fanin.assignment_group(two, 0)
    with pytest.raises(ValueError, match="no assignment of job 6"):
        fanin.assignment_group(two, 0, job=6)
    a = _native.read_assignment(str(two), 0, 1, 5)
    assert (a["job"], a["workers"], a["me"], a["parent"], a["session"]) == (5, 1, "127.0.0.1:40000", "127.0.0.1:39999", True)
    # A rank's own address must be bindable here.
    bad = asg(0, 1)
    bad["me"]["ip"] = "192.0.2.1"
    with pytest.raises(_native.FaninError, match="cannot bind a worker socket at 192.0.2.1.*rank 0 in"):
        fanin.assignment_group(write("f.json", [bad]), 0)
    # Through the backend the message names the variable; a 1-rank group meets a 2-worker job.
    with pytest.raises(AssertionError, match="FANIN_ASSIGNMENT: job 1 in .* has 2 workers, but this group has 1 ranks"):
        w.launch(w.placed, 1, env={"FANIN_ASSIGNMENT": str(good)})
    with pytest.raises(AssertionError, match="FANIN_LANES needs a job per lane"):
        w.launch(w.placed, 2, env={"FANIN_ASSIGNMENT": str(good), "FANIN_LANES": "2"})


def test_fabric_bench_smoke(tmp_path):
    """The emulated-fabric benchmark (host/python/bench/fabric.py) runs end to end on 2 hosts
    with 1 MiB, split into 4 pieces over 2 lanes (its ranks check every sum); speed is not
    asserted here."""
    import json
    import shutil
    import subprocess

    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None:
        pytest.skip("needs root and iproute2 (ip netns, tc)")
    bench = os.path.join(os.path.dirname(__file__), "..", "bench", "fabric.py")
    r = subprocess.run(
        [sys.executable, bench, "--fanin", _fanin_bin(), "--hosts", "2", "--sizes", "1", "--reps", "1",
         "--rate", "200mbit", "--chunk", "65536", "--prefix", f"fnt{os.getpid() % 100000}", "--deadline", "120", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=180,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.loads((tmp_path / "fabric.json").read_text())["rows"]
    assert [(x["n"], x["mib"]) for x in rows] == [(2, 1)]
    assert rows[0]["fanin_s"] > 0 and rows[0]["gloo_s"] > 0
    assert (tmp_path / "fabric.svg").read_text().startswith("<svg")
    assert "speed-up" in r.stdout
    # The per-link accounting (tbf counters read by each rank around each all_reduce): each
    # backend put at least its payload on the busiest uplink (1 MiB each way at N = 2: fanin
    # S, the ring 2(N-1)/N·S), plus headers, and fanin at least its JOIN and preamble.
    links = {x["backend"]: x for x in json.loads((tmp_path / "fabric.json").read_text())["links"]}
    assert sorted(links) == ["fanin", "gloo"]
    for b, x in links.items():
        assert 1.0 < x["wire_ratio"] < 1.3, f"{b}: {x['bytes']} bytes on the uplink for 1 MiB"
        assert x["dropped"] == 0, f"{b}: tbf dropped {x['dropped']} packets"
        # A tbf with burst B passes at most B + rate·t bytes in t (the bucket is full when the
        # all_reduce starts), so busy can exceed 1 by B / (rate·t): the bench's `busy_max`
        # (64 KiB at 200 Mbit/s is 2.6 ms, at most 6 % of the 42 ms 1 MiB takes on the wire).
        # 2 % more covers the timer around the counter reads.
        assert 1.0 < x["busy_max"] < 1.07, x["busy_max"]
        assert 0 < x["busy"] <= x["busy_max"] + 0.02, (
            f"{b}: the uplink was busy {x['busy']:.1%} of the time (at most {x['busy_max']:.1%})")
    assert links["fanin"]["extra"] >= 2
    assert "where the time goes" in r.stdout


def test_fabric_bench_helpers():
    """The bench's rate parser and its reading of `tc -s qdisc` output."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "fabric_bench", os.path.join(os.path.dirname(__file__), "..", "bench", "fabric.py"))
    fb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fb)
    assert fb.parse_rate("50mbit") == 50e6
    assert fb.parse_rate("1gbit") == 1e9
    assert fb.parse_rate("100kbps") == 800e3
    with pytest.raises(SystemExit, match="--rate '50 mbps/s'"):
        fb.parse_rate("50 mbps/s")
    assert fb.parse_size("64kb") == 65536
    assert fb.parse_size("1500") == fb.parse_size("1500b") == 1500
    assert fb.parse_size("2mb") == 2 * 2**20
    with pytest.raises(SystemExit, match="--burst '64 kbit'"):
        fb.parse_size("64 kbit")
    out = ('[{"kind":"tbf","handle":"80cd:","root":true,"refcnt":2,"options":{"rate":6250000,"burst":65531},'
           '"bytes":71462912,"packets":65682,"drops":3,"overlimits":2329,"requeues":0,"backlog":19456,"qlen":2}]')
    fb.sh = lambda *a, **k: out
    assert fb.tc_counters("eth0") == {"bytes": 71462912, "pkts": 65682, "dropped": 3, "overlimits": 2329,
                                      "backlog_bytes": 19456, "backlog_pkts": 2}
    fb.sh = lambda *a, **k: '[{"kind":"noqueue","handle":"0:","root":true,"refcnt":2,"options":{}}]'
    with pytest.raises(RuntimeError, match="no tbf counters in `tc -s -j qdisc show dev eth0`"):
        fb.tc_counters("eth0")


def test_concurrent_lanes():
    """FANIN_LANES=3: six allreduces issued at once run on three jobs concurrently (more
    than one in flight) and every sum is exact; then six futures with float32 averages."""
    # A small window: three lanes' windows share one (debug-built) switch thread.
    res = w.launch(w.concurrent, 2, args=(6,), env={"FANIN_LANES": "3", "FANIN_WINDOW": "16"})
    for r, v in res.items():
        assert v["exact"], f"rank {r}: an int32 sum differs"
        assert v["avg_ok"], f"rank {r}: a float32 average differs"
        assert v["lanes"] == 3
        assert v["completed"] == 12
        assert v["max_in_flight"] >= 2, f"rank {r}: the lanes never overlapped"


def test_split_across_lanes():
    """FANIN_CHUNK=1000 (768: a multiple of 256 elements per packet) with 2 lanes: allreduces
    longer than that go to both lanes in pieces; every sum exact or within the bound of the
    returned exponent, each call counted once, pieces in flight together."""
    res = w.launch(w.split, 2, env={"FANIN_LANES": "2", "FANIN_CHUNK": "1000", "FANIN_WINDOW": "16"})
    for r, v in res.items():
        assert v["chunk"] == 768
        assert v["exact"], f"rank {r}: a split int32 sum differs"
        assert v["exact_futures"], f"rank {r}: an int32 sum issued as a future differs"
        assert v["worst"] <= 1.0, f"rank {r}: float error {v['worst']:.3f}x the bound (e={v['e']})"
        assert v["completed"] == 5, f"rank {r}: {v['completed']} allreduces counted, 5 issued"
        # 10037 elements in 14 pieces of at most 768 (twice), then 5000, 300, 4000: 7, 1, 6.
        assert v["pieces"] == 14 + 7 + 1 + 6 + 14, f"rank {r}: {v['pieces']} pieces sent"
        assert v["max_in_flight"] >= 2, f"rank {r}: the pieces never overlapped"
    assert len({v["e"] for v in res.values()}) == 1, "ranks returned different exponents"


def test_bad_chunk(monkeypatch):
    monkeypatch.setenv("FANIN_CHUNK", "-1")
    with pytest.raises(ValueError, match="FANIN_CHUNK=-1 must be 0"):
        fanin._Group(None, "127.0.0.1:1", 0, 1, 1, 256, 16, 1.0)

