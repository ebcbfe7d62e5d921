"""Benchmark of topogen search (``bench/bench.py --search``): screening, and explicit builds per executor.

Two tables:

* screening: a space of ``--search-points`` designs or more (both architectures,
  eight HB-domain sizes, four catalogs' port modes, six leaf ratios, planes,
  packing; at least 100,000 GPUs), screened by the closed form and cut to its
  near-front, in this process: ``screen_s`` and microseconds per design;
* explicit builds: the first ``--search-builds`` buildable designs of
  ``--search-gpus`` GPUs (``topogen.search.explicit.build_design``, what the search
  sends to its executor), on each executor of ``--search-executors``: ``local-N``
  (N local worker processes; ``local-1`` builds in this process) and ``dask``
  (a ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 that
  the bench starts and stops; their start is not timed).
  ``wall_s`` from the first build sent to the last result back; builds per second.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from topogen.search import front, run, screen, space
from topogen.search.executor import Dask, Local

WORKLOAD = {"model": "gpt-3-175b", "gpu": "b200"}
RATIOS = ["1:1", "2:1", "3:1", "5:1", "7:1", "15:1"]


def big_space(gpus: int) -> dict:
    return {
        "name": "bench",
        "workload": WORKLOAD,
        "search": {
            "gpus": {"at_least": gpus},
            "space": {
                "arch": ["rail-optimized", "rail-only"],
                "hb_domain": [8, 16, 32, 36, 64, 72, 128, 256],
                "catalog": ["ndr-400g", "xdr-800g", "chassis-400g", "hpn-51t"],
                "oversubscription": RATIOS,
                "planes": [1, 2, 4, 8],
                "rail_packing": ["shared", "dedicated"],
                "leaf_packing": ["aligned", "shared"],
            },
            "objectives": ["capex", "power", "iteration", "blast_radius"],
        },
    }


def screening(points: int) -> dict:
    """Screen a space of at least ``points`` designs; the time of the closed form and of the near-front cut."""
    data = big_space(100_000)
    s = space.parse(data, {})
    cats = run.load_catalogs(s)
    pts, _ = space.points(s, cats)
    pts = pts[:points]  # the space holds 10,752 designs
    t0 = time.perf_counter()
    sc = screen.Screener(s, cats)
    rows = [sc.screen(i, o) for i, o in enumerate(pts)]
    t1 = time.perf_counter()
    live = [r for r in rows if "skipped" not in r]
    keys = [space.OBJECTIVES[o].key for o in s.objectives]
    near = front.near_front([[r[k] for k in keys] for r in live], [0.0 if space.OBJECTIVES[o].exact_in_screening else s.slack for o in s.objectives])
    t2 = time.perf_counter()
    return {"designs": len(rows), "buildable": len(live), "near_front": len(near), "screen_s": t1 - t0, "front_s": t2 - t1, "us_per_design": (t1 - t0) / len(rows) * 1e6}


def build_specs(builds: int, gpus: int) -> list[dict]:
    """The first ``builds`` buildable designs of ``gpus`` GPUs (exactly), as the spec dicts a search sends."""
    data = big_space(gpus)
    data["search"]["gpus"] = gpus
    s = space.parse(data, {})
    cats = run.load_catalogs(s)
    pts, _ = space.points(s, cats)
    sc = screen.Screener(s, cats)
    out = []
    for i, o in enumerate(pts):
        r = sc.screen(i, o)
        if "skipped" in r:
            continue
        sc.materialize(r)
        out.append(r["spec"])
        if len(out) == builds:
            break
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def dask_cluster(workers: int = 2) -> Iterator[str]:
    """A ``dask scheduler`` and ``workers`` ``dask worker`` processes on 127.0.0.1, stopped at the end."""
    from distributed import Client

    dask = str(Path(sys.executable).parent / "dask")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    logs = tempfile.mkdtemp(prefix="topogen-bench-dask-")
    try:
        procs.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", f"127.0.0.1:{free_port()}"], stdout=open(f"{logs}/scheduler.log", "w"), stderr=subprocess.STDOUT, start_new_session=True))
        for i in range(workers):
            procs.append(subprocess.Popen([dask, "worker", address, "--no-nanny", "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"], stdout=open(f"{logs}/worker{i}.log", "w"), stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + 120
        while True:
            try:
                client = Client(address, timeout=10, set_as_default=False)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        try:
            while len(client.scheduler_info()["workers"]) < workers:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"dask workers did not register; logs in {logs}")
                time.sleep(0.5)
            client.run(lambda: __import__("topogen.pipeline"))  # workers import topogen before the clock starts
        finally:
            client.close()
        yield address
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(10)


def timed_builds(executor, specs: list[dict]) -> dict:
    t0 = time.perf_counter()
    got = dict(executor.run(specs))
    wall = time.perf_counter() - t0
    bad = [g.get("error") for g in got.values() if "error" in g]
    assert len(got) == len(specs) and not bad, bad[:3]
    return {"builds": len(specs), "wall_s": wall, "builds_per_s": len(specs) / wall}


def main(points: int, builds: int, gpus: int, executors: list[str]) -> None:
    load0 = os.getloadavg()[0]
    sc = screening(points)
    print(f"{os.cpu_count()} CPUs; python {sys.version.split()[0]}; load average {load0:.1f} at the start")
    print()
    print("| designs | buildable | near front | screen_s | us_per_design | front_s |")
    print("|---|---|---|---|---|---|")
    print(f"| {sc['designs']:,} | {sc['buildable']:,} | {sc['near_front']:,} | {sc['screen_s']:.2f} | {sc['us_per_design']:.0f} | {sc['front_s']:.2f} |")
    print()
    specs = build_specs(builds, gpus)
    Local(1).run(specs[:1]).__next__()  # this process imports what a build needs before the clock starts (as workers do)
    print("| executor | gpus | builds | wall_s | builds_per_s |")
    print("|---|---|---|---|---|")
    for ex in executors:
        if ex == "dask":
            with dask_cluster(2) as address:
                r = timed_builds(Dask(address), specs)
            name = "dask, 2 workers"
        else:
            jobs = int(ex.split("-")[1])
            r = timed_builds(Local(jobs), specs)
            name = f"local, {jobs} process{'es' if jobs > 1 else ''}"
        print(f"| {name} | {gpus:,} | {r['builds']} | {r['wall_s']:.2f} | {r['builds_per_s']:.2f} |")
    print()
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
