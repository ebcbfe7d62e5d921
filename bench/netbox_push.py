"""Devices, interfaces and cables per second into a real NetBox: `topogen netbox push` against the bulk-import page.

    python3 tools/netbox_server.py up
    .venv/bin/python bench/netbox_push.py --gpus 4096 [--gpus 16384] [--page-rows 300]

For each size: a rail-optimized build (``--hb-domain 8 --radix 64``, NetBox files only) is
pushed whole through the REST API (:mod:`topogen.exports.netbox.push`), the rate of each kind
taken from its bulk requests; then a second cluster of the same size gets its sites, racks and
prerequisites by the API and ``--page-rows`` rows of each of devices, interfaces and cables
pasted into the bulk-import page as a browser posts it, timed. Both run against the same NetBox
on the same machine. Cables are where NetBox itself is the limit: each cable saved traces its
paths (both ways), and that cost is the same through the API and the page.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from click.testing import CliRunner  # noqa: E402

from tests.netbox_live import Browser, _state  # noqa: E402
from topogen.cli import main  # noqa: E402
from topogen.exports.netbox import push as nbpush  # noqa: E402


def build(tmp: Path, name: str, gpus: int) -> Path:
    out = tmp / name
    res = CliRunner().invoke(main, ["build", "--name", name, "--gpus", str(gpus), "--hb-domain", "8", "--radix", "64", "--arch", "rail-optimized", "--formats", "netbox", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    return out


def api(nb: dict, out: Path) -> dict[str, float]:
    c = nbpush.Client(nb["url"], nb["token"])
    rates: dict[str, tuple[int, float]] = {}
    t0 = time.monotonic()
    p = nbpush.plan(c, out)
    plan_s = time.monotonic() - t0
    starts: dict[str, float] = {}

    def progress(kind, done, total, rate):
        starts.setdefault(kind, time.monotonic())
        rates[kind] = (done, rate)
        print(f"  api {kind}: {done:,}/{total:,} {rate:,.1f}/s", file=sys.stderr, end="\r")

    nbpush.push(c, out, p, progress)
    print(file=sys.stderr)
    again = time.monotonic()
    assert nbpush.plan(c, out).empty
    return {"plan_s": plan_s, "replan_s": time.monotonic() - again, **{k: r for k, (_n, r) in rates.items()}}


def page(nb: dict, out: Path, rows: int, tmp: Path) -> dict[str, float]:
    """Prerequisites by the API, then ``rows`` rows of each kind through the import page."""
    c = nbpush.Client(nb["url"], nb["token"])
    files = nbpush.build_files(out)
    pre = out.parent / (out.name + "-pre")
    (pre / "netbox" / "shared").mkdir(parents=True)
    for kind, f in files:
        if kind in ("site", "manufacturer", "device-role", "rack-role", "device-type"):
            (pre / f.relative_to(out)).write_bytes(f.read_bytes())
    arch = pre / "rail-optimized" / "netbox"
    arch.mkdir(parents=True)
    (arch / "racks.csv").write_bytes((out / "rail-optimized" / "netbox" / "racks.csv").read_bytes())
    (arch / "devices.csv").write_text("name,role,device_type,manufacturer,site,rack,position,face,status,comments\n")
    nbpush.push(c, pre, nbpush.plan(c, pre))
    b = Browser(nb)
    got = {}
    for kind in ("device", "interface", "cable"):
        src = next(f for k, f in files if k == kind)
        lines = src.read_text().splitlines(keepends=True)
        head, body = lines[0], lines[1:]
        if kind == "interface":  # the ports of the devices imported, so cables find them
            names = {ln.split(",", 1)[0] for ln in (next(f for k, f in files if k == "device").read_text().splitlines()[1 : rows + 1])}
            body = [ln for ln in body if ln.split(",", 1)[0] in names][:rows]
        elif kind == "cable":
            have = {(r["device"], r["name"]) for r in c.all("dcim/interfaces", site=f"{out.name}-rail-optimized")}
            body = [ln for ln in body if tuple(ln.split(",")[1:4:2]) in have and tuple(ln.split(",")[5:8:2]) in have][:rows]
        else:
            body = body[:rows]
        part = tmp / f"{kind}.csv"
        part.write_text(head + "".join(body))
        t0 = time.monotonic()
        ok, err = b.import_csv(kind, part)
        assert ok, err
        got[kind] = len(body) / (time.monotonic() - t0)
        print(f"  page {kind}: {len(body):,} rows {got[kind]:,.1f}/s", file=sys.stderr)
    return got


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
    ap.add_argument("--page-rows", type=int, default=300, help="rows of each kind timed through the import page")
    ap.add_argument("--files", metavar="BUILD_DIR", help="instead: import every file of BUILD_DIR through the page, seconds per row of each")
    a = ap.parse_args()
    nb = _state()
    if nb is None:
        raise SystemExit("no NetBox up: python3 tools/netbox_server.py up")
    if a.files:
        per_row(nb, Path(a.files))
        return
    stamp = time.strftime("%H%M%S")
    with tempfile.TemporaryDirectory(prefix="netbox-bench-") as tmp:
        for gpus in a.gpus or [4096]:
            t = Path(tmp)
            api_rates = api(nb, build(t, f"bench{gpus}a{stamp}", gpus))
            page_rates = page(nb, build(t, f"bench{gpus}p{stamp}", gpus), a.page_rows, t)
            print(f"{gpus:,} GPUs: plan {api_rates['plan_s']:.1f} s, replan {api_rates['replan_s']:.1f} s")
            for kind in ("device", "interface", "cable"):
                r, q = api_rates.get(kind, 0), page_rates.get(kind, 0)
                print(f"  {kind:<10} api {r:8,.1f}/s   import page {q:8,.1f}/s   x{r / q if q else 0:,.1f}")


if __name__ == "__main__":
    main_()
