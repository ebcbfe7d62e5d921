"""What the installers get: cabling.csv's floor columns and labels, pull sheets, rack elevations.

Files are read back: labels unique and naming both ends, every cable on exactly
one pull sheet (its rack pair), elevations rendered by Graphviz, and
``topogen validate`` / ``topogen diff`` reading cabling.csv with and without the
new columns.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from topogen import pipeline
from topogen.cli import main
from topogen.spec.cluster import build_spec, load_spec

SPECS = [
    {"gpus": 64, "hb_domain": 8, "radix": 16},
    {"gpus": 1152, "hb_domain": 72, "radix": 64, "gpus_per_node": 4, "catalog": "ndr-400g"},
    {"gpus": 512, "hb_domain": 8, "radix": 16, "planes": 2},
]


@pytest.fixture(scope="module", params=range(len(SPECS)), ids=lambda i: f"spec{i}")
def built(request, tmp_path_factory):
    spec = build_spec({"name": "floor", **SPECS[request.param]})
    ctx = pipeline.build(spec)
    out = tmp_path_factory.mktemp("floor") / "floor"
    pipeline.write_outputs(ctx, out, ["cabling", "pull-sheets", "bom", "diagrams"])
    return ctx, out


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_cabling_floor_columns_and_unique_labels(built):
    ctx, out = built
    for arch, fabric in ctx.fabrics.items():
        rows = _rows(out / arch / "cabling.csv")
        lay = ctx.layouts[arch]
        assert len(rows) == len(fabric.links)
        labels = [r["label"] for r in rows]
        assert len(set(labels)) == len(labels)
        for r in rows[:: max(1, len(rows) // 200)]:
            assert r["a_rack"] and r["z_rack"] and int(r["a_u"]) >= 1 and int(r["z_u"]) >= 1
            assert r["label"].startswith(f"{r['a_rack']}-U") and f" / {r['z_rack']}-U" in r["label"]
            assert r["label"].endswith(" " + r["z_port"])
            assert r["media"]
        assert [float(r["length_m"]) for r in rows] == lay.length_m.tolist()
        bom = ctx.boms[arch]
        if any(c.cable for c in bom.link_media.media):  # catalogs that price cables name a SKU per cable
            assert all(r["cable_sku"] for r in rows)
            skus = {}
            for r in rows:
                skus[r["cable_sku"]] = skus.get(r["cable_sku"], 0) + 1
            counted = {x.sku: x.quantity for x in bom.sku_lines() if x.category == "cable"}
            assert {k: v for k, v in skus.items()} == counted or all(c.links_per_cable > 1 for c in bom.link_media.cables)


def test_pull_sheets_hold_every_cable_once_by_rack_pair(built):
    ctx, out = built
    for arch, fabric in ctx.fabrics.items():
        rows = _rows(out / arch / "pull-sheets.csv")
        assert sorted(int(r["cable"]) for r in rows) == list(range(1, len(fabric.links) + 1))
        for r in rows:
            assert r["sheet"] == "_".join(sorted((r["a_rack"], r["z_rack"])))
        sheets = sorted({r["sheet"] for r in rows})
        assert [r["sheet"] for r in rows] == sorted(r["sheet"] for r in rows)  # grouped
        per_pair = sorted((out / arch / "pull-sheets").glob("row-*/*.csv"), key=lambda p: p.stem)
        assert [p.stem for p in per_pair] == sheets
        assert sum(len(_rows(p)) for p in per_pair) == len(rows)
        rack_row = dict(zip(ctx.layouts[arch].racks.name, ctx.layouts[arch].racks.row))
        for p in per_pair:  # each pair in the folder of its first rack's row
            assert p.parent.name == f"row-{rack_row[p.stem.split('_')[0]] + 1:02d}"
        index = _rows(out / arch / "pull-sheets" / "index.csv")
        assert [r["sheet"] for r in index] == sheets
        assert all((out / arch / "pull-sheets" / r["file"]).is_file() and int(r["cables"]) == len(_rows(out / arch / "pull-sheets" / r["file"])) for r in index)
        assert sum(int(r["cables"]) for r in index) == len(fabric.links)


def test_rack_elevations_per_rack_type(built):
    ctx, out = built
    for arch in ctx.fabrics:
        kinds = sorted(set(ctx.layouts[arch].racks.kind))
        dots = sorted(p.stem for p in (out / arch / "racks").glob("*.dot"))
        assert dots == kinds
        text = (out / arch / "racks" / "compute.dot").read_text()
        assert "tray: " in text and "U1<" in text
        if shutil.which("dot"):
            assert (out / arch / "racks" / "compute.svg").exists()
            subprocess.run(["dot", "-Tsvg", "-o", "/dev/null", str(out / arch / "racks" / "compute.dot")], check=True)


def test_every_rack_drawn_once_on_its_row_page(built):
    """racks/row-NN.html: every rack of the floor once, on its row's page, in name order; index.html links each."""
    ctx, out = built
    for arch in ctx.fabrics:
        racks = ctx.layouts[arch].racks
        d = out / arch / "racks"
        pages = sorted(d.glob("row-*.html"))
        assert [p.name for p in pages] == [f"row-{r + 1:02d}.html" for r in sorted(set(racks.row.tolist()))]
        seen = []
        for p in pages:
            ids = re.findall(r'<div class="rack" id="([^"]+)">', p.read_text())
            assert ids == sorted(ids)
            row = int(p.stem.split("-")[1]) - 1
            assert all(racks.row[list(racks.name).index(i)] == row for i in ids)
            seen += ids
        assert sorted(seen) == sorted(racks.name)
        trays = sum(p.read_text().count("tray: ") for p in pages)
        pl = ctx.layouts[arch].placement
        g = ctx.fabrics[arch].gpus
        assert trays == len(set(zip(pl.rack[:g].tolist(), pl.u[:g].tolist())))  # every tray of every rack, once
        index = (d / "index.html").read_text()
        assert sorted(re.findall(r'href="row-\d+\.html#([^"]+)"', index)) == sorted(racks.name)
        assert f"{len(racks):,} racks in {len(pages):,} row(s)" in index


def test_validate_and_diff_read_cabling_with_and_without_floor_columns(built, tmp_path):
    ctx, out = built
    arch = next(iter(ctx.fabrics))
    full = out / arch / "cabling.csv"
    res = CliRunner().invoke(main, ["validate", str(full)])
    assert res.exit_code == 0, res.output
    rows = _rows(full)
    plain = tmp_path / "plain.csv"
    keep = ["cable", "tier", "link", "plane", "a_device", "a_role", "a_port", "a_speed_gbps", "z_device", "z_role", "z_port", "z_speed_gbps"]
    with open(plain, "w", newline="") as fh:
        w = csv.DictWriter(fh, keep, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    res = CliRunner().invoke(main, ["validate", str(plain), "--spec", str(_spec_file(ctx, tmp_path)), "--arch", arch])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["diff", str(full), str(plain)])
    assert res.exit_code == 0 and "no deviations" in res.output


def _spec_file(ctx, tmp_path):
    import yaml

    p = tmp_path / "spec.yaml"
    d = ctx.spec.to_dict()
    p.write_text(yaml.safe_dump(d))
    return p


def test_diff_names_rack_and_u(built, tmp_path):
    ctx, out = built
    arch = next(iter(ctx.fabrics))
    rows = _rows(out / arch / "cabling.csv")
    rows = rows[1:]  # one cable missing on the floor
    floor = tmp_path / "floor.csv"
    with open(floor, "w", newline="") as fh:
        w = csv.DictWriter(fh, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    res = CliRunner().invoke(main, ["diff", str(out / arch), str(floor)])
    assert res.exit_code == 1
    first = _rows(out / arch / "cabling.csv")[0]
    assert f"(rack {first['a_rack']} U{first['a_u']})" in res.output and "missing" in res.output


@pytest.mark.parametrize("preset,args", [("gb200-nvl72", ("--gpus", "144")), ("demo", ()), ("gh200-32k", ("--gpus", "512"))])
def test_rack_elevation_trays_are_labelled_by_node(tmp_path, preset, args):
    """An NVL72 compute tray is host hb00-n03 (the NetBox device and Slurm node), not a range of GPU names."""
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", preset, *args, "--out", str(out), "--formats", "diagrams,netbox"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    spec = load_spec(preset, {"gpus": args[1]} if args else None)
    for arch in spec.arches:
        text = (out / arch / "racks" / "compute.dot").read_text()
        trays = re.findall(r"tray: ([^<(]+) \((\d+) GPUs\)", text)
        assert trays and not any("gpu" in t for t, _n in trays), trays[:3]
        hosts = {r.split(",")[0].split(".", 1)[1] for r in (out / arch / "netbox" / "devices.csv").read_text().splitlines()[1:] if ",gpu-node," in r}
        for t, n in trays:
            first = t.split(" .. ")[0].strip()
            assert first in hosts and int(n) > 0, (first, sorted(hosts)[:3])
