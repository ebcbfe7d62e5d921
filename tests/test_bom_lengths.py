"""A breakout harness is one cable of one length: cable-lengths.csv agrees with bom.csv, cabling.csv gives its legs one length."""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from topogen.cli import main


def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# fabrics whose GPU-leaf links leave the leaves on breakout cables (2 NIC legs per switch cage)
BREAKOUTS = [
    ("nic200-leaf400", "--gpus", "1024"),
    ("nic200-leaf400", "--gpus", "4096"),
    ("alibaba-hpn",),
]


@pytest.mark.parametrize("args", BREAKOUTS, ids=lambda a: "-".join(a))
def test_length_histogram_counts_cables_as_the_bom_does(tmp_path, args):
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", *args, "--out", str(out), "--formats", "bom,cabling"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    harnesses = 0
    for arch in ("rail-optimized", "rail-only"):
        d = out / arch
        if not d.exists():
            continue
        bom = Counter()
        for r in _rows(d / "bom.csv"):
            if r["category"] == "cable":
                bom[r["sku"]] += int(r["quantity"])  # one row per SKU (its tiers in used_in)
        hist = Counter()
        for r in _rows(d / "cable-lengths.csv"):
            if r["cable_sku"]:
                hist[r["cable_sku"]] += int(r["cables"])
        assert hist == bom, (arch, hist, bom)
        legs: dict[str, set] = defaultdict(set)
        cabling = _rows(d / "cabling.csv")
        for r in cabling:
            if r.get("breakout_cable"):
                legs[r["breakout_cable"]].add((r["length_m"], r["media"], r["cable_sku"]))
        assert all(len(v) == 1 for v in legs.values()), [k for k, v in legs.items() if len(v) > 1][:5]
        total = sum(int(r["cables"]) for r in _rows(d / "cable-lengths.csv"))
        per = Counter(r["breakout_cable"] for r in cabling if r.get("breakout_cable"))
        assert total == len(cabling) - sum(c - 1 for c in per.values())  # every link once, a harness once
        harnesses += len(legs)
    assert harnesses, "no breakout cable: this case cannot test the harness"
