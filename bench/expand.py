"""Benchmark: ``topogen expand`` over a grid of growths, and one large growth timed.

Grid (radix 32, HB domain 2, one leaf's downlinks per SU): rail-optimized and rail-only,
1:1 and 3:1, top tier sized for the SUs present (plain) or for 16 SUs (reserved), each
chained 2 -> 4 -> 8 -> 16 SUs through expand's own output. One Markdown row per step:
cables kept / moved / added / removed, the share of installed connections changed, the
fewest any wiring of the new design changes, what a plain rebuild of the new spec changes,
the stages (re-cabling ones) and the worst stage's bandwidth share, the installed devices the
grown floor relocates, the kept links the grown address plan renumbers (the installed plan is
pinned: only rail-only GPU NICs whose rail block widens), the installed switches whose loopback or ASN changes, and for a spec with
networks the share of their installed cables changed (a plain rebuild's in brackets).

    .venv/bin/python bench/expand.py                     # the grid, and the DGX H100 SuperPOD with its networks 1 -> 2 -> 4 SUs
    .venv/bin/python bench/expand.py --large 8192        # also 8,192 -> 16,384 GPUs (HB 8, radix 64, SUs of 32 nodes), timed

Every figure is read from the expand.json the command writes (the same numbers it prints).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SU = {"1:1": 16, "3:1": 24}  # nodes per SU at radix 32, 2 GPUs per node: one leaf's downlinks


def topogen(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "topogen", *args], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def flags(arch: str, ratio: str, sus: int, reserved: bool) -> list[str]:
    f = ["--name", "grid", "--hb-domain", "2", "--gpus-per-node", "2", "--radix", "32", "--arch", arch, "--oversubscription", ratio, "--scalable-unit", str(SU[ratio]), "--gpus", str(sus * SU[ratio] * 2)]
    return f + (["--max-scalable-units", "16"] if reserved else [])


def row(case: str, f: dict, seconds: float) -> str:
    c = f["cables"]
    a = f.get("addresses", {})
    n = f.get("networks")
    nets = f"{n['changed_share']:.1%} ({n['rebuild']['changed_share']:.1%}){'' if n['final_valid'] else ' INVALID'}" if n else "-"
    return (
        f"| {case} | {c['kept']:,} | {c['moved']:,} | {c['added']:,} | {c['removed']:,} | {f['changed_share']:.1%} | {f['fewest_possible_share']:.1%} | "
        f"{f['rebuild']['changed_share']:.1%} | {f['stages']} ({f['moving_stages']}) | {f['worst_stage_share']:.1%} | {'yes' if f['stages_valid'] and f['final_valid'] else 'NO'} | "
        f"{f.get('relocated_devices', '-')} | {a.get('links_kept_renumbered', '-')} | {a.get('loopbacks_changed', '-')} / {a.get('asns_changed', '-')} | {nets} | {seconds:.1f} |"
    )


HEADER = (
    "| growth | kept | moved | added | removed | changed | fewest possible | rebuild changes | stages (re-cabling) | worst stage | valid | relocated | kept links renumbered | loopbacks / ASNs changed | networks changed (rebuild) | s |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def grid(work: Path) -> list[str]:
    out = []
    for arch in ("rail-optimized", "rail-only"):
        for ratio in ("1:1", "3:1"):
            for reserved in (False, True):
                first = 4 if arch == "rail-only" and ratio == "1:1" else 2  # 2 SUs of 1:1 rails fit one switch per rail
                prev = work / f"{arch}-{ratio}-{reserved}-{first}"
                topogen("build", *flags(arch, ratio, first, reserved), "--formats", "cabling", "-q", "--out", str(prev))
                sus = first * 2
                while sus <= 16:
                    nxt = work / f"{arch}-{ratio}-{reserved}-{sus}"
                    t = time.perf_counter()
                    topogen("expand", str(prev), *flags(arch, ratio, sus, reserved), "--out", str(nxt))
                    f = json.loads((nxt / "expand.json").read_text())["expansions"][0]
                    out.append(row(f"{arch} {ratio} {'reserved' if reserved else 'plain'} {sus // 2}->{sus} SUs", f, time.perf_counter() - t))
                    prev, sus = nxt, sus * 2
    return out


def networks(work: Path) -> list[str]:
    """The DGX H100 SuperPOD with its storage, in-band and OOB networks, 1 -> 2 -> 4 SUs (256 -> 504 -> 1,016 GPUs)."""
    base = ["dgx-h100-superpod", "--arch", "rail-optimized"]
    prev = work / "pod1"
    topogen("build", *base, "--gpus", "256", "--formats", "cabling", "-q", "--out", str(prev))
    out = []
    for gpus, sus in ((504, 2), (1016, 4)):
        nxt = work / f"pod{sus}"
        t = time.perf_counter()
        topogen("expand", str(prev), *base, "--gpus", str(gpus), "--out", str(nxt))
        f = json.loads((nxt / "expand.json").read_text())["expansions"][0]
        out.append(row(f"dgx-h100-superpod with networks {sus // 2}->{sus} SUs", f, time.perf_counter() - t))
        prev = nxt
    return out


def large(work: Path, gpus: int) -> str:
    base = ["--name", "large", "--hb-domain", "8", "--radix", "64", "--arch", "rail-optimized", "--scalable-unit", "32"]
    topogen("build", *base, "--gpus", str(gpus), "--formats", "cabling", "-q", "--out", str(work / "large1"))
    t = time.perf_counter()
    topogen("expand", str(work / "large1"), *base, "--gpus", str(2 * gpus), "--out", str(work / "large2"))
    f = json.loads((work / "large2" / "expand.json").read_text())["expansions"][0]
    return row(f"rail-optimized {gpus:,} -> {2 * gpus:,} GPUs (HB 8, radix 64)", f, time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", type=int, default=0, help="Also grow a rail-optimized build of this many GPUs to twice as many, timed.")
    ap.add_argument("--no-grid", action="store_true", help="Skip the grid.")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="topogen-bench-expand-") as tmp:
        rows = [] if a.no_grid else grid(Path(tmp)) + networks(Path(tmp))
        if a.large:
            rows.append(large(Path(tmp), a.large))
    print(HEADER)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
