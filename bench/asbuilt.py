"""Benchmark: ``topogen diff`` on large as-built inputs (time and peak memory).

Three cases, each run as the ``topogen`` program under ``/usr/bin/time -v``:

* ``lldp``: lldpctl -f json files (one per device) of a rail-optimized build, about
  100,000 interfaces (every cable seen from both ends), against the build;
* ``lldp-one``: one lldpctl file of 100,000 interfaces (a switch whose neighbours the
  plan does not have: 100,000 deviations), against the build;
* ``csv``: a cabling CSV of about 1.2 GB (the build's cabling.csv with its floor
  columns, its rows written again and again, as a careless export would), against the
  build: the diff must stream it in bounded memory and report the repeated records.

    .venv/bin/python bench/asbuilt.py                 # every case
    .venv/bin/python bench/asbuilt.py --case lldp --gpus 16384
    .venv/bin/python bench/asbuilt.py --case csv --csv-gb 1.2
    .venv/bin/python bench/asbuilt.py --case csv --csv-gb 0.3 --source /tmp/old   # another checkout's topogen (PYTHONPATH)

Prints one Markdown row per case: inputs, wall time, CPU time, peak RSS, exit code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TIME_V = {"wall": r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", "user": r"User time \(seconds\): (\S+)", "sys": r"System time \(seconds\): (\S+)", "rss_kb": r"Maximum resident set size \(kbytes\): (\d+)"}


def plan(work: Path, gpus: int) -> Path:
    """A rail-optimized build (cabling and ibnetdiscover only) of ``gpus`` GPUs, HB domain 8, radix 64."""
    out = work / "plan"
    cmd = [sys.executable, "-m", "topogen", "build", "--gpus", str(gpus), "--hb-domain", "8", "--radix", "64", "--arch", "rail-optimized", "--name", "bench", "--formats", "cabling", "--out", str(out)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def lldp_files(cabling: Path, dest: Path) -> int:
    """lldpctl -f json output of every device (hosts by their node name, GPU ports gpu<rank>-nic<plane>); the interface count."""
    import csv

    per: dict[str, list] = {}
    with open(cabling, newline="") as fh:
        for r in csv.DictReader(fh):
            for here, hp, there, tp in ((r["a_device"], r["a_port"], r["z_device"], r["z_port"]), (r["z_device"], r["z_port"], r["a_device"], r["a_port"])):
                host, ifname = _lldp_name(here, hp)
                peer, pport = _lldp_name(there, tp)
                per.setdefault(host, []).append({ifname: {"via": "LLDP", "chassis": {peer: {"id": {"type": "mac", "value": "0c:42:a1:00:00:01"}, "descr": "bench"}}, "port": {"id": {"type": "ifname", "value": pport}, "descr": pport}}})
    dest.mkdir(parents=True, exist_ok=True)
    for host, items in per.items():
        (dest / f"{host}.json").write_text(json.dumps({"lldp": {"interface": items if len(items) > 1 else items[0]}}))
    return sum(len(v) for v in per.values())


def _lldp_name(device: str, port: str) -> tuple[str, str]:
    m = re.match(r"^(hb\d+)-gpu(\d+)$", device)
    if m:
        return m.group(1), f"gpu{m.group(2)}-nic{port[3:]}"
    return device, port


def lldp_one(dest: Path, interfaces: int = 100_000) -> int:
    """One lldpctl file of ``interfaces`` interfaces of ``leaf-g0-r0``, each to a port the plan does not have."""
    items = [{f"p{i}": {"chassis": {f"spine-{i % 4}": {"id": {"type": "mac", "value": "0c:42:a1:00:00:%02x" % (i % 4)}}}, "port": {"id": {"type": "ifname", "value": f"p{i}"}}}} for i in range(1, interfaces + 1)]
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "leaf-g0-r0.json").write_text(json.dumps({"lldp": {"interface": items}}))
    return interfaces


def big_csv(cabling: Path, dest: Path, gb: float) -> int:
    """The build's cabling.csv, its rows repeated until the file holds ``gb`` GB; the size in bytes."""
    lines = cabling.read_bytes().splitlines(keepends=True)
    header, body = lines[0], b"".join(lines[1:])
    want = int(gb * 1e9)
    with open(dest, "wb") as fh:
        fh.write(header)
        size = len(header)
        while size < want:
            fh.write(body)
            size += len(body)
    return size


def timed(cmd: list[str], source: str | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=source) if source else None
    res = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env, cwd=source or None)
    out = {"exit": res.returncode}
    for k, rx in TIME_V.items():
        m = re.search(rx, res.stderr)
        out[k] = m.group(1) if m else "?"
    parts = [float(x) for x in out["wall"].split(":")] if out["wall"] != "?" else [0.0]
    out["wall_s"] = sum(x * 60 ** i for i, x in enumerate(reversed(parts)))
    out["cpu_s"] = float(out["user"]) + float(out["sys"])
    out["peak_rss_mb"] = int(out["rss_kb"]) / 1024
    out["tail"] = (res.stdout.splitlines()[:2] + res.stderr.splitlines()[:2])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=["lldp", "lldp-one", "csv", "all"], default="all")
    ap.add_argument("--gpus", type=int, default=16384, help="GPUs of the plan (16,384: about 98,000 LLDP interfaces)")
    ap.add_argument("--csv-gb", type=float, default=1.2)
    ap.add_argument("--keep", help="work directory to keep (default: a temporary one, removed)")
    ap.add_argument("--source", help="run topogen from this source tree (PYTHONPATH), to measure another version")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="topogen-asbuilt-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        out = plan(work, args.gpus)
        cabling = out / "rail-optimized" / "cabling.csv"
        print("| case | input | wall_s | cpu_s | peak_rss_mb | exit |")
        print("|---|---|---:|---:|---:|---:|")
        topogen = [sys.executable, "-m", "topogen", "diff", str(out)]
        if args.case in ("lldp", "all"):
            n = lldp_files(cabling, work / "lldp")
            r = timed([*topogen, str(work / "lldp")], args.source)
            print(f"| lldp | {n:,} interfaces, {args.gpus:,} GPUs | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:,.0f} | {r['exit']} |", flush=True)
        if args.case in ("lldp-one", "all"):
            n = lldp_one(work / "lldp-one")
            r = timed([*topogen, str(work / "lldp-one" / "leaf-g0-r0.json")], args.source)
            print(f"| lldp-one | {n:,} interfaces in one file, {args.gpus:,} GPUs | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:,.0f} | {r['exit']} |", flush=True)
        if args.case in ("csv", "all"):
            size = big_csv(cabling, work / "floor.csv", args.csv_gb)
            r = timed([*topogen, str(work / "floor.csv")], args.source)
            print(f"| csv | {size / 1e9:.2f} GB, {args.gpus:,} GPUs | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:,.0f} | {r['exit']} |", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
