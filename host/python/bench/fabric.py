#!/usr/bin/env python3
"""Emulated fabric: one all_reduce through fanin against gloo's ring over the same links.

N hosts, each in its own network namespace behind a veth pair rate-limited with ``tc`` (tbf,
both directions), and a switch namespace that routes between them and runs ``fanin switchd``.
Each host runs one torch rank: ``backend="fanin"`` with ``FANIN_SWITCH`` (the job is
registered at the switchd), and a gloo group over the same links. For each size and repetition
the ranks meet at a barrier, then time one ``all_reduce``; a run's time is the slowest rank's.
In-network aggregation moves S each way per host, a ring 2(N-1)/N·S: the goal is
fanin ≥ 0.9·2(N-1)/N × gloo's speed. Each rank also reads its uplink's tbf counters around
each all_reduce, for the "where the time goes" table (bytes and frames on the wire, busy
share of the link, retransmissions). Needs root (ip netns, tc). See docs/python.md.

    sudo target/venv/bin/python host/python/bench/fabric.py --fanin target/release/fanin \\
        --hosts 2 4 --rate 50mbit --sizes 4 16 64 --reps 3 --out target/fabric
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

PREFIX = "fnb"  # namespace and link names: fnb-sw, fnb-h0, ...; veth fnb-s0 (switch side); --prefix
PORT = 48879
IP_UDP = 28  # IPv4 + UDP header bytes
HEADER = 22  # fanin header bytes (fanin_proto::wire::HEADER_LEN)
MAX_ELEMENTS = 2237  # elements of one packet in a 9000-byte datagram (wire::MAX_WIRE_ELEMENTS)


def sh(*args, ns=None, check=True):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + [str(a) for a in args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


def namespaces():
    out = sh("ip", "netns", "list", check=False)
    return [line.split()[0] for line in out.splitlines() if line.startswith(PREFIX + "-")]


def teardown():
    for ns in namespaces():
        sh("ip", "netns", "del", ns, check=False)


def host_ip(i):
    return f"10.77.{i}.2"


def setup(n, rate, burst, limit, mtu):
    """The switch namespace and n host namespaces, each linked by a shaped veth pair of MTU
    ``mtu`` (both ends: fanin and gloo cross the very same links)."""
    teardown()
    sw = f"{PREFIX}-sw"
    sh("ip", "netns", "add", sw)
    sh("ip", "link", "set", "lo", "up", ns=sw)
    sh("sysctl", "-q", "-w", "net.ipv4.ip_forward=1", ns=sw)
    for i in range(n):
        h = f"{PREFIX}-h{i}"
        sh("ip", "netns", "add", h)
        sh("ip", "link", "add", f"{PREFIX}-x{i}", "netns", h, "type", "veth", "peer", "name", f"{PREFIX}-s{i}", "netns", sw)
        sh("ip", "link", "set", f"{PREFIX}-x{i}", "name", "eth0", ns=h)
        sh("ip", "link", "set", "eth0", "mtu", mtu, ns=h)
        sh("ip", "link", "set", f"{PREFIX}-s{i}", "mtu", mtu, ns=sw)
        sh("ip", "addr", "add", f"{host_ip(i)}/24", "dev", "eth0", ns=h)
        sh("ip", "link", "set", "lo", "up", ns=h)
        sh("ip", "link", "set", "eth0", "up", ns=h)
        sh("ip", "route", "add", "default", "via", f"10.77.{i}.1", ns=h)
        sh("ip", "addr", "add", f"10.77.{i}.1/24", "dev", f"{PREFIX}-s{i}", ns=sw)
        sh("ip", "link", "set", f"{PREFIX}-s{i}", "up", ns=sw)
        for dev, ns in (("eth0", h), (f"{PREFIX}-s{i}", sw)):
            sh("tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate, "burst", burst, "limit", limit, ns=ns)
    return sw


def tc_counters(dev, ns=None):
    """tbf's counters on ``dev`` (``tc -s -j``): bytes and packets sent (whole frames,
    headers included), dropped, overlimits (dequeues the rate held back) and the backlog now."""
    out = sh("tc", "-s", "-j", "qdisc", "show", "dev", dev, ns=ns)
    try:
        q = next(q for q in json.loads(out) if q.get("kind") == "tbf")
        return {"bytes": q["bytes"], "pkts": q["packets"], "dropped": q["drops"], "overlimits": q["overlimits"],
                "backlog_bytes": q["backlog"], "backlog_pkts": q["qlen"]}
    except (ValueError, StopIteration, KeyError, TypeError):
        raise RuntimeError(f"no tbf counters in `tc -s -j qdisc show dev {dev}`: {out.strip()!r}") from None


def parse_rate(rate):
    """A tc rate such as ``50mbit`` or ``1gbit`` in bits per second."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)(bit|bps)", rate.strip().lower())
    if not m:
        raise SystemExit(f"--rate {rate!r}: give it as tc does, e.g. 50mbit or 1gbit")
    bits = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    return bits * (8 if m.group(3) == "bps" else 1)


def parse_size(size):
    """A tc size such as ``64kb`` or ``1500b`` in bytes (tc's ``kb``/``mb`` are 1024-based)."""
    m = re.fullmatch(r"(\d+)(b|kb|k|mb|m)?", size.strip().lower())
    if not m:
        raise SystemExit(f"--burst {size!r}: give it as tc does, e.g. 64kb")
    return int(m.group(1)) * {None: 1, "b": 1, "k": 1024, "kb": 1024, "m": 2**20, "mb": 2**20}[m.group(2)]


def tc_drops(n):
    """Packets tbf dropped on every shaped link (host uplinks and switch downlinks)."""
    drops = {}
    for i in range(n):
        for dev, ns in (("eth0", f"{PREFIX}-h{i}"), (f"{PREFIX}-s{i}", f"{PREFIX}-sw")):
            drops[f"{ns}/{dev}"] = tc_counters(dev, ns)["dropped"]
    return drops


def run_hosts(args, n, sw, workdir):
    """Starts switchd in the switch namespace and one rank per host namespace; returns rank
    0's measurements."""
    swaddr = f"10.77.0.1:{PORT}"
    # A placeholder job: rank 0 replaces it with the real workers over the control port.
    switchd = subprocess.Popen(
        ["ip", "netns", "exec", sw, args.fanin, "switchd", "--listen", swaddr, "--job", "1",
         "--elements", str(args.elements), "--slots", str(args.slots * args.lanes)]
        + [a for k in range(n) for a in ("--worker", f"10.77.{k}.2:{9 + k}")],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(workdir, f"switchd-{n}.log"), "w"),
    )
    time.sleep(1.0)
    if switchd.poll() is not None:
        raise RuntimeError(f"switchd exited: see {workdir}/switchd-{n}.log")
    store = os.path.join(workdir, f"store-{n}")
    result = os.path.join(workdir, f"result-{n}.json")
    for p in (store, result):
        if os.path.exists(p):
            os.remove(p)
    env = dict(os.environ, FANIN_SWITCH=swaddr, FANIN_ELEMENTS=str(args.elements), FANIN_SLOTS=str(args.slots),
               FANIN_LANES=str(args.lanes), FANIN_CHUNK=str(args.chunk),
               FANIN_WINDOW=str(args.window), FANIN_RETRANSMIT_MS=str(args.retransmit_ms),
               FANIN_TIMEOUT="120", GLOO_SOCKET_IFNAME="eth0", OMP_NUM_THREADS="1")
    procs = []
    samples = []  # (wall clock, switchd CPU seconds)
    stop = threading.Event()

    def sample():
        tick = os.sysconf("SC_CLK_TCK")
        while not stop.is_set():
            try:
                with open(f"/proc/{switchd.pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                samples.append((time.time(), (int(fields[11]) + int(fields[12])) / tick))
            except (OSError, IndexError, ValueError):
                pass
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        for i in range(n):
            env_i = dict(env, FANIN_HOST=host_ip(i))
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", f"{PREFIX}-h{i}", sys.executable, __file__, "--worker",
                 "--rank", str(i), "--world", str(n), "--store", store, "--result", result,
                 "--reps", str(args.reps), "--fanin", args.fanin, "--switch", swaddr,
                 "--sizes", *[str(s) for s in args.sizes]],
                env=env_i,
            ))
        deadline = time.monotonic() + args.deadline
        while any(p.poll() is None for p in procs):
            if time.monotonic() > deadline:
                raise RuntimeError(f"N={n}: the ranks did not finish within {args.deadline}s")
            if any(p.poll() not in (None, 0) for p in procs):
                raise RuntimeError(f"N={n}: a rank failed (exit {[p.poll() for p in procs]})")
            time.sleep(0.5)
        with open(result) as f:
            rows = json.load(f)
        stop.set()
        sampler.join()
        for r in rows:
            r["switchd_cpu"] = cpu_share(samples, *r["wall"])
        return rows
    finally:
        stop.set()
        for p in procs:
            if p.poll() is None:
                p.kill()
        switchd.terminate()
        switchd.wait()


def cpu_share(samples, t0, t1):
    """switchd's CPU seconds per wall second between t0 and t1, from the (time, cpu) samples."""
    def at(t):
        before = [c for (w, c) in samples if w <= t]
        return before[-1] if before else (samples[0][1] if samples else 0.0)

    if t1 - t0 < 0.2 or not samples:
        return float("nan")
    return (at(t1) - at(t0)) / (t1 - t0)


def switch_counters(a):
    """The switchd's model counters (``fanin stats --json``), by name."""
    r = subprocess.run([a.fanin, "stats", "--json", a.switch], capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        raise SystemExit(f"fanin stats {a.switch}: {r.stderr.strip()}")
    return dict(json.loads(r.stdout)["counters"])


SWITCH_SHOWN = ("duplicates", "reemits", "timeouts", "reclaims", "refused", "root_drops")


def link_use(n, mib, backend, mine, a):
    """One backend's median uplink use at one size: frames, bytes, busy share of the link."""
    med = lambda k: statistics.median(r[k] for r in mine)  # noqa: E731
    secs, nbytes, pkts = med("secs"), med("up_bytes"), int(med("up_pkts"))
    payload = mib * 2**20 * (1 if backend == "fanin" else 2 * (n - 1) / n)
    # fanin: one datagram per block of `elements`; the rest is the JOIN, the preamble and
    # retransmissions. gloo: TCP segments and ACKs, shown as they are.
    blocks = -(-mib * 2**20 // 4 // a.elements) if backend == "fanin" else 0
    busy = nbytes * 8 / parse_rate(a.rate)
    # The bucket is full when the all_reduce starts: tbf passes up to burst + rate·t in t.
    busy_max = 1 + parse_size(a.burst) * 8 / parse_rate(a.rate) / secs
    switch = {}
    for r in mine:
        for k, v in r.get("switch", {}).items():
            switch.setdefault(k, []).append(v)
    return {"n": n, "mib": mib, "backend": backend, "secs": secs, "bytes": nbytes, "pkts": pkts,
            "wire_ratio": nbytes / payload, "extra": pkts - blocks if backend == "fanin" else "-",
            "busy": busy / secs, "busy_max": busy_max, "idle_s": secs - busy, "overlimits": int(med("up_overlimits")),
            "dropped": int(med("up_dropped")),
            "switch": {k: int(statistics.median(v)) for k, v in sorted(switch.items())}}


def worker(a):
    """One rank: times fanin and gloo all_reduce of each size; rank 0 writes the result."""
    import numpy as np
    import torch
    import torch.distributed as dist

    import fanin.torch  # noqa: F401

    torch.set_num_threads(1)
    dist.init_process_group("fanin", init_method=f"file://{a.store}", rank=a.rank, world_size=a.world)
    gloo = dist.new_group(backend="gloo")
    rows = []
    for mib in a.sizes:
        n = mib * 2**20 // 4
        base = np.full(n, 0.5 * (a.rank + 1), dtype=np.float32)
        base[::7] = -0.25 * (a.rank + 1)
        want = base / (a.rank + 1) * (a.world * (a.world + 1) / 2)
        for backend, group in (("fanin", None), ("gloo", gloo)):
            for rep in range(a.reps):
                t = torch.from_numpy(base.copy())
                sw0 = switch_counters(a) if backend == "fanin" and a.rank == 0 else {}
                dist.barrier(group=gloo)
                up0 = tc_counters("eth0")
                wall, cpu = time.time(), time.process_time()
                start = time.perf_counter()
                dist.all_reduce(t, group=group)
                secs = time.perf_counter() - start
                cpu = (time.process_time() - cpu) / secs
                up1 = tc_counters("eth0")
                err = float(np.abs(t.numpy() - want).max())
                if err > 1e-4:
                    raise SystemExit(f"rank {a.rank}: {backend} all_reduce of {mib} MiB is wrong by {err}")
                # The uplink's counters over this all_reduce (its tbf: whole frames). The
                # barrier's few bytes before up0 may still be queued; they are noise here.
                up = [up1[k] - up0[k] for k in ("bytes", "pkts", "overlimits", "dropped")]
                worst = torch.tensor([secs, cpu, *up], dtype=torch.float64)
                dist.all_reduce(worst, op=dist.ReduceOp.MAX, group=gloo)
                row = {"backend": backend, "mib": mib, "rep": rep, "secs": float(worst[0]),
                       "worker_cpu": float(worst[1]), "wall": [wall, wall + secs],
                       "up_bytes": int(worst[2]), "up_pkts": int(worst[3]),
                       "up_overlimits": int(worst[4]), "up_dropped": int(worst[5])}
                if sw0:
                    sw1 = switch_counters(a)
                    row["switch"] = {k: sw1.get(k, 0) - v for k, v in sw0.items() if sw1.get(k, 0) != v}
                rows.append(row)
    if a.rank == 0:
        with open(a.result, "w") as f:
            json.dump(rows, f)
    dist.destroy_process_group()


def svg(path, table, rate):
    """Grouped bars: speed-up of fanin over gloo per size, one group per N, with the goal."""
    w, h, left, bottom = 640, 360, 60, 50
    top = max(max(r["speedup"] for r in table), max(r["goal"] for r in table)) * 1.2
    ns = sorted({r["n"] for r in table})
    sizes = sorted({r["mib"] for r in table})
    colors = ["#4c72b0", "#dd8452", "#55a868", "#c44e52"]
    gw = (w - left - 20) / len(ns)
    bw = gw * 0.7 / len(sizes)
    y = lambda v: h - bottom - v / top * (h - bottom - 30)  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<text x="{w / 2}" y="18" text-anchor="middle">fanin vs gloo ring: one all_reduce over {rate} links (speed-up, higher is better)</text>',
           f'<line x1="{left}" y1="{y(0)}" x2="{w - 20}" y2="{y(0)}" stroke="black"/>',
           f'<line x1="{left}" y1="{y(0)}" x2="{left}" y2="{y(top)}" stroke="black"/>']
    step = 0.25 if top < 3 else 0.5
    v = 0.0
    while v <= top:
        out.append(f'<text x="{left - 6}" y="{y(v) + 4}" text-anchor="end">{v:.2f}</text>')
        out.append(f'<line x1="{left}" y1="{y(v)}" x2="{w - 20}" y2="{y(v)}" stroke="#ddd"/>')
        v += step
    for gi, n in enumerate(ns):
        x0 = left + gi * gw + gw * 0.15
        goal = next(r["goal"] for r in table if r["n"] == n)
        out.append(f'<line x1="{x0 - 5}" y1="{y(goal)}" x2="{x0 + gw * 0.7 + 5}" y2="{y(goal)}" stroke="red" stroke-dasharray="4 3"/>')
        out.append(f'<text x="{x0 + gw * 0.7 + 6}" y="{y(goal) + 4}" fill="red">goal {goal:.2f}</text>')
        out.append(f'<text x="{x0 + gw * 0.35}" y="{h - bottom + 32}" text-anchor="middle">N = {n} hosts</text>')
        for si, mib in enumerate(sizes):
            r = next((r for r in table if r["n"] == n and r["mib"] == mib), None)
            if r is None:
                continue
            x = x0 + si * bw
            out.append(f'<rect x="{x:.1f}" y="{y(r["speedup"]):.1f}" width="{bw * 0.9:.1f}" height="{y(0) - y(r["speedup"]):.1f}" fill="{colors[si % 4]}"/>')
            out.append(f'<text x="{x + bw * 0.45:.1f}" y="{y(r["speedup"]) - 4:.1f}" text-anchor="middle" font-size="10">{r["speedup"]:.2f}</text>')
            out.append(f'<text x="{x + bw * 0.45:.1f}" y="{h - bottom + 14}" text-anchor="middle" font-size="10">{mib} MiB</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    global PREFIX
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    p.add_argument("--world", type=int, help=argparse.SUPPRESS)
    p.add_argument("--store", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    p.add_argument("--switch", help=argparse.SUPPRESS)
    p.add_argument("--fanin", default="target/release/fanin", help="the fanin binary (switchd)")
    p.add_argument("--hosts", type=int, nargs="+", default=[2, 4], help="numbers of hosts N")
    p.add_argument("--rate", default="50mbit", help="tc rate of every link, each direction")
    p.add_argument("--burst", default="64kb", help="tbf burst")
    p.add_argument("--limit", default="4mb", help="tbf queue limit (bytes)")
    p.add_argument("--sizes", type=int, nargs="+", default=[4, 16, 64], help="all_reduce sizes in MiB")
    p.add_argument("--reps", type=int, default=3, help="timed repetitions per size and backend (median)")
    p.add_argument("--mtu", type=int, default=1500, help="MTU of every veth (both ends; fanin and gloo alike)")
    p.add_argument("--elements", type=int, default=None,
                   help="fanin elements per packet [default: as many as fill one --mtu datagram, at most 2237]")
    p.add_argument("--slots", type=int, default=256, help="fanin slots (the window)")
    p.add_argument("--lanes", type=int, default=2,
                   help="fanin lanes (FANIN_LANES: jobs at the switchd, each with --slots slots)")
    p.add_argument("--chunk", type=int, default=None,
                   help="fanin elements per piece of a split all_reduce (FANIN_CHUNK; 0: never split) "
                        "[default: fanin.DEFAULT_CHUNK]")
    p.add_argument("--window", type=int, default=32, help="fanin blocks in flight per worker (FANIN_WINDOW)")
    p.add_argument("--retransmit-ms", type=int, default=50, help="fanin retransmission timeout (FANIN_RETRANSMIT_MS)")
    p.add_argument("--deadline", type=float, default=900, help="seconds allowed per N")
    p.add_argument("--prefix", default=PREFIX, help="name prefix of the namespaces and links (at most 8 characters)")
    p.add_argument("--out", default="target/fabric", help="directory for fabric.json and fabric.svg")
    a = p.parse_args()
    if a.worker:
        return worker(a)
    if a.chunk is None:
        import fanin

        a.chunk = fanin.DEFAULT_CHUNK
    if a.chunk < 0 or a.lanes < 1:
        raise SystemExit(f"--chunk {a.chunk} and --lanes {a.lanes}: 0 or more elements, 1 or more lanes")
    if not 576 <= a.mtu <= 9000:
        raise SystemExit(f"--mtu {a.mtu} must be 576 to 9000")
    fits = (a.mtu - IP_UDP - HEADER) // 4
    if a.elements is None:
        a.elements = min(fits, MAX_ELEMENTS)
    if not 1 <= a.elements <= min(fits, MAX_ELEMENTS):
        raise SystemExit(f"--elements {a.elements} must be 1 to {min(fits, MAX_ELEMENTS)}: a packet must fit the "
                         f"--mtu {a.mtu} datagram (IPv4 + UDP {IP_UDP} + fanin header {HEADER} + 4 per element)")
    parse_size(a.burst)  # a bad --burst fails here, not after the runs
    # fanin has no congestion control: what all lanes have in flight queues at the uplink's
    # tbf, and a queue longer than the retransmission timeout resends whole windows.
    queued_ms = a.lanes * a.window * (a.elements * 4 + HEADER + IP_UDP + 14) * 8 / parse_rate(a.rate) * 1e3
    if queued_ms > a.retransmit_ms / 2:
        print(f"warning: {a.lanes} lanes x window {a.window} x {a.elements} elements queue {queued_ms:.0f} ms at "
              f"{a.rate}, more than half the {a.retransmit_ms} ms retransmission timeout: expect spurious "
              f"retransmissions (the 'extra' column)", file=sys.stderr)
    if not (a.prefix.isalnum() and len(a.prefix) <= 8):
        raise SystemExit(f"--prefix {a.prefix!r} must be 1 to 8 letters or digits")
    PREFIX = a.prefix
    if os.geteuid() != 0:
        raise SystemExit("fabric.py needs root (ip netns, tc): run it with sudo")
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise SystemExit(f"fabric.py needs `{tool}` (iproute2)")
    if not os.path.exists(a.fanin):
        raise SystemExit(f"no fanin binary at {a.fanin}: cargo build --release -p fanin, or pass --fanin")
    a.fanin = os.path.abspath(a.fanin)
    os.makedirs(a.out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="fanin-fabric-")
    table = []
    wire = []
    try:
        for n in a.hosts:
            sw = setup(n, a.rate, a.burst, a.limit, a.mtu)
            rows = run_hosts(a, n, sw, workdir)
            drops = tc_drops(n)
            teardown()
            for mib in a.sizes:
                pick = lambda b, k: statistics.median(  # noqa: E731
                    r[k] for r in rows if r["backend"] == b and r["mib"] == mib)
                med = {b: pick(b, "secs") for b in ("fanin", "gloo")}
                goal = 0.9 * 2 * (n - 1) / n
                table.append({"n": n, "mib": mib, "fanin_s": med["fanin"], "gloo_s": med["gloo"],
                              "speedup": med["gloo"] / med["fanin"], "ideal": 2 * (n - 1) / n, "goal": goal,
                              "reps": a.reps, "tc_drops": sum(drops.values()),
                              "switchd_cpu": pick("fanin", "switchd_cpu"), "worker_cpu": pick("fanin", "worker_cpu"),
                              "fanin_runs": [r["secs"] for r in rows if r["backend"] == "fanin" and r["mib"] == mib],
                              "gloo_runs": [r["secs"] for r in rows if r["backend"] == "gloo" and r["mib"] == mib]})
                for b in ("fanin", "gloo"):
                    mine = [r for r in rows if r["backend"] == b and r["mib"] == mib]
                    wire.append(link_use(n, mib, b, mine, a))
    finally:
        teardown()
    print(f"links: tbf {a.rate} each way (burst {a.burst}, limit {a.limit}), MTU {a.mtu}; fanin {a.elements} elements/packet, "
          f"{a.lanes} lanes, pieces of {a.chunk} elements, window {a.window} per lane, "
          f"retransmit {a.retransmit_ms} ms; median of {a.reps}")
    print(f"{'N':>3} {'MiB':>5} {'fanin s':>9} {'gloo s':>9} {'fanin Mbit/s':>13} {'speed-up':>9} {'ideal':>6} {'goal':>6}  met "
          f" {'switchd CPU':>11} {'worker CPU':>10}  tc drops")
    for r in table:
        mbit = r["mib"] * 2**20 * 8 / r["fanin_s"] / 1e6
        met = "yes" if r["speedup"] >= r["goal"] else "NO"
        print(f"{r['n']:>3} {r['mib']:>5} {r['fanin_s']:>9.3f} {r['gloo_s']:>9.3f} {mbit:>13.0f} {r['speedup']:>9.2f} "
              f"{r['ideal']:>6.2f} {r['goal']:>6.2f}  {met:<4} {r['switchd_cpu']:>11.2f} {r['worker_cpu']:>10.2f}  {r['tc_drops']}")
    print(f"where the time goes (per host uplink, the busiest rank, median of {a.reps}): wire = frames on the "
          f"link / payload S; busy = wire time at {a.rate} / the all_reduce's time "
          f"(above 100 % by up to the burst's {a.burst} at the start)")
    print(f"{'N':>3} {'MiB':>5} {'backend':>7} {'wire MB':>8} {'wire/S':>7} {'frames':>8} {'extra':>6} {'busy':>6} "
          f"{'idle s':>7} {'overlim':>8} {'drops':>5}  switchd (fanin)")
    for w in wire:
        sw = " ".join(f"{k} {v}" for k, v in w["switch"].items() if k in SWITCH_SHOWN)
        print(f"{w['n']:>3} {w['mib']:>5} {w['backend']:>7} {w['bytes'] / 1e6:>8.2f} {w['wire_ratio']:>7.3f} "
              f"{w['pkts']:>8} {w['extra']:>6} {w['busy']:>6.1%} {w['idle_s']:>7.3f} {w['overlimits']:>8} "
              f"{w['dropped']:>5}  {sw}")
    with open(os.path.join(a.out, "fabric.json"), "w") as f:
        json.dump({"rate": a.rate, "mtu": a.mtu, "elements": a.elements, "window": a.window, "lanes": a.lanes, "chunk": a.chunk,
                   "retransmit_ms": a.retransmit_ms, "burst": a.burst, "limit": a.limit,
                   "rows": table, "links": wire}, f, indent=1)
    svg(os.path.join(a.out, "fabric.svg"), table, a.rate)
    shutil.rmtree(workdir, ignore_errors=True)  # kept after a failure: the switchd logs
    print(f"wrote {a.out}/fabric.json and {a.out}/fabric.svg")


if __name__ == "__main__":
    main()
