"""DDP through fanin next to DDP through gloo: a small MLP, 2 ranks, one switch embedded in
rank 0. Prints both loss curves and writes them as an SVG (argv[1], default ddp_loss.svg)."""

import copy
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD, STEPS = 2, 100


def train(rank, store, q):
    import fanin.torch as ft

    torch.set_num_threads(1)
    dist.init_process_group("fanin", init_method=f"file://{store}", rank=rank, world_size=WORLD)
    gloo = dist.new_group(backend="gloo")
    torch.manual_seed(0)
    base = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    mf, mg = DDP(copy.deepcopy(base)), DDP(copy.deepcopy(base), process_group=gloo)
    mf.register_comm_hook(None, ft.allreduce_hook)
    opts = [torch.optim.SGD(m.parameters(), lr=0.2) for m in (mf, mg)]
    gen = torch.Generator().manual_seed(99 + rank)
    w = torch.linspace(-1, 1, 16)
    curves = ([], [])
    for _ in range(STEPS):
        x = torch.randn(64, 16, generator=gen)
        y = torch.tanh(x @ w / 2).unsqueeze(1)
        for i, (m, o) in enumerate(zip((mf, mg), opts)):
            o.zero_grad()
            loss = torch.nn.functional.mse_loss(m(x), y)
            loss.backward()
            o.step()
            curves[i].append(float(loss.detach()))
    with torch.no_grad():
        diff = max(float((a - b).abs().max()) for a, b in zip(mf.parameters(), mg.parameters()))
    dist.destroy_process_group()
    q.put((rank, curves, diff))


def svg(curves, path):
    """A dependency-free line chart of the two curves."""
    W, H, P = 640, 360, 50
    top = max(max(c) for c in curves)
    pts = lambda c: " ".join(
        f"{P + i * (W - 2 * P) / (len(c) - 1):.1f},{H - P - v / top * (H - 2 * P):.1f}" for i, v in enumerate(c)
    )
    colors = ("#d62728", "#1f77b4")
    names = ("fanin (switch)", "gloo")
    lines = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<line x1="{P}" y1="{H - P}" x2="{W - P}" y2="{H - P}" stroke="black"/>',
        f'<line x1="{P}" y1="{P}" x2="{P}" y2="{H - P}" stroke="black"/>',
        f'<text x="{W / 2}" y="{H - 15}" text-anchor="middle">step (0..{len(curves[0]) - 1})</text>',
        f'<text x="15" y="{P - 10}">loss (0..{top:.3f}), rank 0, {WORLD} ranks DDP</text>',
    ]
    for k, (c, col) in enumerate(zip(curves, colors)):
        dash = ' stroke-dasharray="6 4"' if k else ""
        lines.append(f'<polyline fill="none" stroke="{col}" stroke-width="2"{dash} points="{pts(c)}"/>')
        lines.append(f'<text x="{W - P - 120}" y="{P + 15 * (k + 1)}" fill="{col}">{names[k]}</text>')
    lines.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "ddp_loss.svg"
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    store = os.path.join(tempfile.mkdtemp(prefix="fanin-demo-"), "store")
    ps = [ctx.Process(target=train, args=(r, store, q)) for r in range(WORLD)]
    for p in ps:
        p.start()
    res = {}
    for _ in ps:
        r, curves, diff = q.get(timeout=300)
        res[r] = (curves, diff)
    for p in ps:
        p.join(timeout=30)
    (fan, glo), diff = res[0]
    print(f"{'step':>5} {'fanin loss':>11} {'gloo loss':>11}")
    for i in range(0, STEPS, 10):
        print(f"{i:>5} {fan[i]:>11.5f} {glo[i]:>11.5f}")
    print(f"{STEPS - 1:>5} {fan[-1]:>11.5f} {glo[-1]:>11.5f}")
    worst = max(d for _, d in res.values())
    print(f"largest parameter difference fanin vs gloo after {STEPS} steps: {worst:.3g}")
    svg((fan, glo), out)
    print(f"loss curves: {out}")
    if not (fan[-1] < 0.5 * fan[0] and worst < 1e-4):
        sys.exit("demo check failed: the loss did not halve or fanin drifted from gloo by >= 1e-4")
    print("verified: the loss halves and fanin's parameters stay within 1e-4 of gloo's")


if __name__ == "__main__":
    main()
