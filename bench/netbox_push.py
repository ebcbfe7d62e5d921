"""Devices, interfaces and cables per second into a real NetBox: `topogen netbox push` against the bulk-import page.

    python3 tools/netbox_server.py up
    .venv/bin/python bench/netbox_push.py --gpus 4096 --gpus 16384 [--cables 300] [--jobs 3]

For each size a rail-optimized build (``--hb-domain 8 --radix 64``, NetBox files only) is made
twice under two names, and the same sample of each is loaded into the same NetBox both ways: the
first ``--cables`` rows of ``cables*.csv``, the devices at their ends and every interface of those
devices (with the sites, shared objects and racks they need). One sample goes through
``topogen netbox push`` (rows per second of each kind from its bulk requests), the other through
the bulk-import page as a browser posts it, one file per kind (rows per second of each post).
A whole 4,096-GPU build is 37,000 rows, an hour either way on a busy 2-core machine; a kind's rate
does not depend on how many of its rows precede it, so the sample gives it.

Beside each rate: NetBox's own CPU seconds per row while the rows went in (its web workers, RQ
worker with the jobs it forks, PostgreSQL and Redis, from ``/proc``), and the search-index jobs
the load left queued for NetBox's RQ worker afterwards (NetBox 4.7 queues one per object of a
bulk API request, one per pasted file). Where the two ways cost NetBox the same CPU per row,
NetBox itself is the limit (a cable traces its paths whichever way it comes in); the API's edge
is sending several requests at once (``--jobs``), which only pays where NetBox has cores free.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from click.testing import CliRunner  # noqa: E402

from tests.netbox_live import Browser, _state  # noqa: E402
from topogen.cli import main  # noqa: E402
from topogen.exports.netbox import push as nbpush  # noqa: E402

KINDS = ("device", "interface", "cable")


def build(tmp: Path, name: str, gpus: int) -> Path:
    out = tmp / name
    res = CliRunner().invoke(main, ["build", "--name", name, "--gpus", str(gpus), "--hb-domain", "8", "--radix", "64", "--arch", "rail-optimized", "--formats", "netbox", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    return out


def sample(out: Path, cables: int) -> Path:
    """A build directory holding the first ``cables`` cables, the devices at their ends and all their ports."""
    dst = out.parent / (out.name + "-sample")
    arch = "rail-optimized/netbox"
    (dst / arch).mkdir(parents=True)
    (dst / "netbox").mkdir()
    (dst / "netbox" / "sites.csv").write_bytes((out / "netbox" / "sites.csv").read_bytes())
    (dst / "netbox" / "shared").mkdir()
    for f in (out / "netbox" / "shared").iterdir():
        (dst / "netbox" / "shared" / f.name).write_bytes(f.read_bytes())
    (dst / arch / "racks.csv").write_bytes((out / arch / "racks.csv").read_bytes())
    files = {k: sorted(f for kk, f in nbpush.build_files(out) if kk == k) for k in KINDS}
    cab = [r for f in files["cable"] for r in nbpush.read_rows(f)][:cables]
    devs = {r[f"side_{s}_device"] for r in cab for s in "ab"}
    rows = {
        "device": [r for f in files["device"] for r in nbpush.read_rows(f) if r["name"] in devs],
        "interface": [r for f in files["interface"] for r in nbpush.read_rows(f) if r["device"] in devs],
        "cable": cab,
    }
    for kind, stem in (("device", "devices"), ("interface", "interfaces"), ("cable", "cables")):
        with open(dst / arch / f"{stem}.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[kind][0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows[kind])
    return dst


def netbox_cpu_s() -> float:
    """CPU seconds of NetBox's processes so far (web workers, RQ worker and the jobs it reaped, PostgreSQL, Redis)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes()
            stat = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if b"topogen-netbox" in cmd or cmd.startswith(b"postgres") or b"redis-server" in cmd:
            total += sum(int(x) for x in stat[11:15])  # utime stime cutime cstime
    return total / tick


def queued(nb: dict) -> int:
    """Jobs waiting for NetBox's RQ worker."""
    return sum(q.get("jobs", 0) for q in nbpush.Client(nb["url"], nb["token"]).all("core/background-queues"))


def api(nb: dict, src: Path, jobs: int) -> dict[str, tuple[float, float, int]]:
    """``kind -> (rows/s, NetBox CPU s per row, jobs queued)`` of ``topogen netbox push``; a second plan finds the kinds done."""
    c = nbpush.Client(nb["url"], nb["token"])
    pre = prerequisites(nb, src)
    p = nbpush.plan(c, src)
    out: dict[str, tuple[float, float]] = {}
    mark: dict[str, tuple[float, float]] = {}

    def progress(kind, done, total, rate):
        print(f"  api {kind}: {done:,}/{total:,} {rate:,.1f}/s   ", file=sys.stderr, end="\r")

    for kind in KINDS:
        one = nbpush.Plan(create={kind: p.create.get(kind, [])})
        q0 = queued(nb)
        mark[kind] = (time.monotonic(), netbox_cpu_s())
        nbpush.push(c, src, one, progress, jobs=jobs)
        wall = time.monotonic() - mark[kind][0]
        n = len(one.create[kind])
        out[kind] = (n / wall, (netbox_cpu_s() - mark[kind][1]) / n, queued(nb) - q0)
        p = nbpush.plan(c, src)  # the next kind's references to this one, from what NetBox now holds
    print(file=sys.stderr)
    t0 = time.monotonic()
    again = nbpush.plan(c, src)
    assert again.empty or not any(again.create.get(k) for k in KINDS), again.counts()
    out["replan_s"] = (time.monotonic() - t0, pre)
    return out


def prerequisites(nb: dict, src: Path) -> float:
    """Sites, shared objects and racks by the API (the same for both ways); seconds taken."""
    c = nbpush.Client(nb["url"], nb["token"])
    p = nbpush.plan(c, src)
    t0 = time.monotonic()
    nbpush.push(c, src, nbpush.Plan(create={k: v for k, v in p.create.items() if k not in KINDS}))
    return time.monotonic() - t0


def page(nb: dict, src: Path) -> dict[str, tuple[float, float, int]]:
    """``kind -> (rows/s, NetBox CPU s per row, jobs queued)`` of the bulk-import page, one post per kind."""
    prerequisites(nb, src)
    b = Browser(nb)
    out = {}
    for kind in KINDS:
        (f,) = [f for k, f in nbpush.build_files(src) if k == kind]
        n = sum(1 for _ in nbpush.read_rows(f))
        q0 = queued(nb)
        t0, cpu0 = time.monotonic(), netbox_cpu_s()
        ok, err = b.import_csv(kind, f)
        wall = time.monotonic() - t0
        assert ok, err
        out[kind] = (n / wall, (netbox_cpu_s() - cpu0) / n, queued(nb) - q0)
        print(f"  page {kind}: {n:,} rows {n / wall:,.1f}/s", file=sys.stderr)
    return out


def per_row(nb: dict, out: Path) -> None:
    """Every file of a build through the import page, in order: seconds per row of each (the part sizes' ``ROW_S``)."""
    b = Browser(nb)
    for kind, f in nbpush.build_files(out):
        n = sum(1 for _ in nbpush.read_rows(f))
        t0 = time.monotonic()
        ok, err = b.import_csv(kind, f)
        dt = time.monotonic() - t0
        print(f"{f.relative_to(out)!s:<48} {n:>6,} rows {dt:7.1f} s {dt / max(n, 1):6.3f} s/row {'' if ok else 'refused: ' + err[:80]}", flush=True)


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, action="append", help="GPU counts (default 4096)")
    ap.add_argument("--cables", type=int, default=300, help="cables in the sample (with their devices and all their ports)")
    ap.add_argument("--jobs", type=int, default=nbpush.JOBS, help="the push's requests at once")
    ap.add_argument("--files", metavar="BUILD_DIR", help="instead: import every file of BUILD_DIR through the page, seconds per row of each")
    a = ap.parse_args()
    nb = _state()
    if nb is None:
        raise SystemExit("no NetBox up: python3 tools/netbox_server.py up")
    if a.files:
        per_row(nb, Path(a.files))
        return
    stamp = time.strftime("%H%M%S")
    report = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="netbox-bench-") as tmp:
        for gpus in a.gpus or [4096]:
            t = Path(tmp)
            pa = sample(build(t, f"bench{gpus}a{stamp}", gpus), a.cables)
            pp = sample(build(t, f"bench{gpus}p{stamp}", gpus), a.cables)
            rows = {k: sum(1 for f in nbpush.build_files(pa) if f[0] == k for _ in nbpush.read_rows(f[1])) for k in KINDS}
            got_api = api(nb, pa, a.jobs)
            got_page = page(nb, pp)
            print(f"{gpus:,} GPUs, sample of {rows['device']:,} devices, {rows['interface']:,} interfaces, {rows['cable']:,} cables; push --jobs {a.jobs}; "
                  f"replan of the pushed sample {got_api['replan_s'][0]:.1f} s (load {os.getloadavg()[0]:.1f})", file=report)  # fmt: skip
            print(f"  {'kind':<10} {'api rows/s':>10} {'page rows/s':>11} {'x':>5}   NetBox CPU s/row: {'api':>6} {'page':>6}   index jobs queued: {'api':>5} {'page':>5}", file=report)
            for kind in KINDS:
                (r, rc, rj), (q, qc, qj) = got_api[kind], got_page[kind]
                print(f"  {kind:<10} {r:10,.1f} {q:11,.1f} {r / q:5.1f}   {'':17}{rc:6.3f} {qc:6.3f}   {'':19}{rj:5,} {qj:5,}", file=report)
            print(report.getvalue(), end="", flush=True)
            report = io.StringIO()


if __name__ == "__main__":
    main_()
