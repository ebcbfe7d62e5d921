"""The kernel's neighbour (ARP/NDP) table is one for every namespace: a fabric with more cable ends than its limit still routes.

Linux keeps one ARP table and one NDP table for all network namespaces, capped by
``net.ipv4.neigh.default.gc_thresh3`` (1,024 by default; settable only from the
first namespace). 256 GPUs at radix 128 on the paper catalog is 8 leaves and 4
spines joined by 512 cables: the 1,024 BGP sessions fill the table on their own,
so before ``emulate`` raised the limit every session came up and then no GPU
could resolve its leaf (``sendmsg: No buffer space available``): 0 pairs reached.
Real FRR in network namespaces, as in ``test_emulate.py``; skipped only where
that cannot run. The limits stay raised until reboot, so on a machine where an
earlier run raised them the emulation test passes without the raise; a fresh
machine (``.ci/run``) starts at the kernel's 1,024 and fails without it.
"""

from __future__ import annotations

import json

import pytest
from test_emulate import WHY, topogen

from topogen.config.emulation import neigh
from topogen.config.emulation.neigh import needed_entries, read_limits, targets

needs_frr = pytest.mark.skipif(WHY is not None, reason=WHY or "")


@pytest.mark.parametrize("cables", [0, 1, 200, 511, 512, 768, 4096, 20000])
@pytest.mark.parametrize("in_use", [0, 2, 1000])
@pytest.mark.parametrize("before", [(128, 512, 1024), (1024, 4096, 8192), (128, 16384, 32768)])
def test_targets_hold_every_cable_end_and_never_lower(cables, in_use, before):
    limits = {"ipv4": before, "ipv6": before}
    got = targets(cables, limits, {"ipv4": in_use, "ipv6": in_use})
    for fam in limits:
        t2, t3 = got.get(fam, before[1:])
        assert t2 >= before[1] and t3 >= before[2]  # never lowered
        assert t2 >= in_use + needed_entries(cables) and t3 >= t2  # every cable end fits before pruning starts
        assert (fam in got) == (before[1] < in_use + needed_entries(cables) or before[2] < 2 * t2)  # written only when short


def test_raise_limits_writes_both_thresholds_and_names_the_sysctl_when_refused(tmp_path, monkeypatch):
    for fam in ("ipv4", "ipv6"):
        d = tmp_path / fam / "neigh" / "default"
        d.mkdir(parents=True)
        for n, v in ((1, 128), (2, 512), (3, 1024)):
            (d / f"gc_thresh{n}").write_text(f"{v}\n")
    monkeypatch.setattr(neigh, "SYSCTL_ROOT", tmp_path)
    monkeypatch.setattr(neigh, "entries_in_use", lambda fam: 100)
    notes, problems = neigh.raise_limits(768)  # 256 GPUs at radix 128: 256 GPU cables, 512 leaf-spine
    assert problems == [] and len(notes) == 2 and "1024" in notes[0] and "4096" in notes[0]
    assert neigh.read_limits() == {"ipv4": (128, 2048, 4096), "ipv6": (128, 2048, 4096)}
    assert neigh.raise_limits(768) == ([], [])  # enough already: nothing written, nothing said
    monkeypatch.setattr(neigh, "read_limits", lambda: {"ipv4": (128, 512, 1024)})
    monkeypatch.setattr(neigh, "SYSCTL_ROOT", tmp_path / "missing")  # a read-only /proc/sys refuses the same way
    notes, problems = neigh.raise_limits(768)
    assert notes == [] and len(problems) == 1
    assert problems[0].path == "emulate" and "sysctl -w net.ipv4.neigh.default.gc_thresh3=4096" in problems[0].hint


@needs_frr
@pytest.mark.parametrize(
    "flags",
    [
        # the reported shape: 2 tiers, 16 parallel cables per leaf-spine pair, 1,024 sessions
        ("--gpus", "256", "--hb-domain", "8", "--radix", "128", "--arch", "rail-optimized"),
    ],
    ids=["ro-256-r128"],  # 12 routers, about 40 s; larger shapes (1,024 GPUs, 2,048 sessions) take minutes and are measured by hand
)
def test_fabric_beyond_default_neighbour_table_routes(tmp_path_factory, flags):
    out = tmp_path_factory.mktemp("reach-neigh") / "b"
    res = topogen("build", *flags, "--catalog", "paper", "--formats", "cabling,addressing,frr", "--out", str(out), "-q")
    assert res.returncode == 0, res.stderr
    arch = flags[flags.index("--arch") + 1]
    with open(out / arch / "cabling.csv") as fh:
        cables = sum(1 for _ in fh) - 1
    res = topogen("emulate", str(out), "--arch", arch, "--gpus", "16", "--timeout", "240", "--json", timeout=600)
    r = json.loads(res.stdout) if res.stdout.strip().startswith("{") else {}
    assert res.returncode == 0 and r.get("ok"), res.stdout[-3000:] + res.stderr[-2000:]
    assert r["sessions"] == r["sessions_up"] >= 1024
    n = r["gpus_sampled"]
    assert r["pairs_reach"] == n * (n - 1) and n == 16
    assert r["reconverge_down_s"] is not None
    # the limit the run left is at least what its cables need (both families)
    for family, (_t1, _t2, t3) in read_limits().items():
        assert t3 >= needed_entries(cables), (family, t3, cables)
