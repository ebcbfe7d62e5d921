"""The shared named view (topogen.fabric.view) and the CSV text built from it.

The exporters gather names and CSV fields from tables formatted once; the
bytes must be those the CSV rule (topogen.util.text) writes row by row from
the Python values, also for names that need quoting (a fabric whose names come
from elsewhere): ``csv.writer``'s bytes wherever the rule changes nothing. The
pull sheets' numeric label order must be the text order of the labels.
"""

from __future__ import annotations

import csv
import dataclasses
import io

import numpy as np
import pytest

from topogen import pipeline
from topogen.exports.installers import cabling, pullsheets
from topogen.fabric import clos
from topogen.fabric.naming import GpuNames, width
from topogen.fabric.view import csv_lines, int_texts, number_texts, view, writer_field
from topogen.layout.labels import COLUMNS as FLOOR_COLUMNS
from topogen.layout.labels import FloorView
from topogen.spec.cluster import build_spec, load_spec
from topogen.util.text import csv_line

PLAIN = ["", "a", 'say "hi"', "a,b", "cr\rlf\n", " lead", "é", "-", 0, -7, "-7", 2.5, 1e20, float("nan")]  # the rule writes these as csv.writer does
RULED = {"x;y": '"x;y"', "tab\there": '"tab\there"', "=1+2": "'=1+2", "a;=1": "\"a;'=1\"", "@x": "'@x"}  # quoted for ';' and tab, formulas neutralised
ODD = [*PLAIN, *RULED]


def writer_text(rows) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def rule_text(rows) -> str:
    """The CSV rule, row by row (the slow, obvious way)."""
    return "".join(csv_line(r) for r in rows)


def test_csv_fields_and_lines_are_the_rule_and_csv_writer_bytes():
    for v in PLAIN:
        assert writer_field(v) + "," + writer_field(v) + "\n" == writer_text([[v, v]]), repr(v)
    for v, field in RULED.items():
        assert writer_field(v) == field
    cols = [[writer_field(v) for v in ODD], [writer_field(v) for v in reversed(ODD)], writer_field("k")]
    assert csv_lines(cols, len(ODD)) == rule_text([[a, b, "k"] for a, b in zip(ODD, reversed(ODD))])
    ints = np.array([0, 5, 4095, 4096, -3, 10**12])
    assert int_texts(ints).tolist() == [str(x) for x in ints.tolist()]
    assert int_texts(np.array([1, 2], np.int8)).tolist() == ["1", "2"]
    nums = np.array([3.0, 2.5, 0.1, 100.0, -0.5])
    assert number_texts(nums).tolist() == [str(int(x) if x.is_integer() else x) for x in nums.tolist()]


SHAPES = [
    {"gpus": 64, "hb_domain": 8, "radix": 16},
    {"gpus": 1152, "hb_domain": 72, "radix": 64, "gpus_per_node": 4},
    {"gpus": 1024, "hb_domain": 8, "radix": 16, "planes": 2},
    {"gpus": 8 * 37, "hb_domain": 8, "radix": 8, "provision": "minimal"},
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "-".join(map(str, s.values())))
def test_view_names_are_the_naming_modules(shape):
    spec = build_spec({"name": "v", **shape})
    for arch in spec.arches:
        f = clos.generate(spec, arch)
        v = view(f)
        assert view(f) is v
        gn = GpuNames(f.gpus, f.hb_domain)
        assert v.device[: f.gpus].tolist() == [gn.name(i) for i in range(f.gpus)]
        assert v.device[f.gpus :].tolist() == [s.name for s in f.switches]
        L = f.links
        rw = width(f.hb_domain)
        assert v.ports(L.a_dev, L.a_port).tolist() == [f"nic{p}" if d < f.gpus else f"p{p}" for d, p in zip(L.a_dev.tolist(), L.a_port.tolist())]
        assert v.interfaces(L.a_dev, L.a_port).tolist() == [f"gpu{d % f.hb_domain:0{rw}d}-nic{p}" if d < f.gpus else f"p{p}" for d, p in zip(L.a_dev.tolist(), L.a_port.tolist())]


def reference_cabling(fabric, lay, bom) -> str:
    """cabling.csv as csv.writer writes it from Python values, row by row (the slow, obvious way)."""
    lm = bom.link_media
    p = lay.placement
    uw = width(lay.spec.rack_u + 1)
    rw = width(fabric.hb_domain)
    names = lay.racks.name

    def port(d, q):
        return f"gpu{d % fabric.hb_domain:0{rw}d}-nic{q}" if d < fabric.gpus else f"p{q}"

    rows = [cabling.COLUMNS + FLOOR_COLUMNS]
    for i, row in enumerate(cabling.generate_rows(fabric)):
        a, z = int(fabric.links.a_dev[i]), int(fabric.links.z_dev[i])
        ap, zp = int(fabric.links.a_port[i]), int(fabric.links.z_port[i])
        m = lm.media[int(lm.index[i])]
        c = int(lm.cable[i])
        gtx = m.gpu_transceiver or m.transceiver
        a_tx = (gtx.sku if gtx else "") if a < fabric.gpus else (m.transceiver.sku if m.transceiver else "")
        z_tx = m.transceiver.sku if m.transceiver else ""
        length = float(lay.length_m[i])
        ar, zr, au, zu = names[int(p.rack[a])], names[int(p.rack[z])], int(p.u[a]), int(p.u[z])
        label = f"{ar}-U{au:0{uw}d} {port(a, ap)} / {zr}-U{zu:0{uw}d} {port(z, zp)}"
        rows.append(row + (ar, au, zr, zu, int(length) if length.is_integer() else length, m.name, lm.cables[c].sku if c >= 0 else "", a_tx, z_tx, label))
    return writer_text(rows)


def odd_context():
    """The demo with a switch name and a rack name that need CSV quoting (the rack's name extends another's)."""
    ctx = pipeline.build(load_spec("demo", {}))
    arch = "rail-optimized"
    f = ctx.fabrics[arch]
    sw = list(f.switches)
    sw[0] = dataclasses.replace(sw[0], name='leaf "A", 1')
    f = dataclasses.replace(f, switches=sw)
    lay = ctx.layouts[arch]
    lay.racks.name[0] = lay.racks.name[1] + ' "0", west'
    return f, lay, ctx.boms[arch]


@pytest.mark.parametrize("odd", [False, True], ids=["generated", "quoted-names"])
def test_cabling_text_is_csv_writer_text(tmp_path, odd):
    if odd:
        f, lay, bom = odd_context()
    else:
        ctx = pipeline.build(build_spec({"name": "c", "gpus": 1024, "hb_domain": 8, "radix": 16, "planes": 2}))
        f, lay, bom = ctx.fabrics["rail-only"], ctx.layouts["rail-only"], ctx.boms["rail-only"]
    path = tmp_path / "cabling.csv"
    cabling.write_cabling(f, path, lay, bom)
    assert path.read_bytes().decode("utf-8") == reference_cabling(f, lay, bom)


@pytest.mark.parametrize("odd", [False, True], ids=["generated", "quoted-names"])
def test_pull_sheet_order_is_the_text_order_of_labels(odd):
    if odd:
        f, lay, bom = odd_context()
    else:
        ctx = pipeline.build(build_spec({"name": "c", "gpus": 1152, "hb_domain": 72, "radix": 64, "gpus_per_node": 4}))
        f, lay, bom = ctx.fabrics["rail-optimized"], ctx.layouts["rail-optimized"], ctx.boms["rail-optimized"]
    floor = FloorView(f, lay, bom)
    order, sheet, names = pullsheets.sheet_order(f, lay, floor)
    labels = [x for sl in view(f).chunks() for x in floor.labels(sl)]
    racks = lay.racks.name
    p = lay.placement
    keys = []
    for i in range(len(f.links)):
        ka, kz = racks[int(p.rack[f.links.a_dev[i]])], racks[int(p.rack[f.links.z_dev[i]])]
        keys.append((f"{min(ka, kz)}_{max(ka, kz)}", float(lay.length_m[i]), labels[i]))
    assert order.tolist() == sorted(range(len(keys)), key=keys.__getitem__)
    assert [names[sheet[i]] for i in range(len(keys))] == [k[0] for k in keys]


@pytest.mark.parametrize("limit", [40, 97, 300, 10_000])
def test_parts_split_at_records_within_the_limit(tmp_path, limit):
    """Every part holds the header and whole records, at most ``limit`` bytes unless one record alone is longer."""
    from topogen.exports.files import write_csv_parts

    header = "a,b\n"
    recs = [f"{i},{'é' * (i % 7)}{'x' * (i % 50)}" for i in range(200)] + ["y" * 500, "1,2"]
    chunks = [recs[i : i + 33] for i in range(0, len(recs), 33)]
    paths = write_csv_parts(tmp_path, "t", header, chunks, limit)
    bodies = [p.read_bytes() for p in paths]
    assert all(b.startswith(header.encode()) for b in bodies)
    assert b"".join(b[len(header) :] for b in bodies).decode() == "\n".join(recs) + "\n"
    for b in bodies:
        assert len(b) <= limit or b.count(b"\n") == 2, len(b)  # header + one long record
    for b, nxt in zip(bodies, bodies[1:]):  # greedy: the next record did not fit
        first = nxt[len(header) :].split(b"\n")[0]
        assert len(b) + len(first) + 1 > limit
    if len(paths) == 1:
        assert paths[0].name == "t.csv"
    else:
        assert [p.name for p in paths] == [f"t-{i:03d}.csv" for i in range(1, len(paths) + 1)]
    assert [p.name for p in write_csv_parts(tmp_path / "..", "e", header, iter([]), limit)] == ["e.csv"]


def test_netbox_text_is_csv_writer_text_of_its_rows(tmp_path):
    """The NetBox interface and cable files are csv.writer's bytes of the row generators, also with names to quote."""
    from topogen.exports.netbox import dcim as netbox

    f, lay, bom = odd_context()
    ctx = pipeline.build(load_spec("demo", {}))
    ctx.fabrics = {f.arch: f}
    ctx.layouts = {f.arch: lay}
    for part, columns, rows in (
        ("interfaces", netbox.INTERFACE_COLUMNS, netbox.interface_rows(f, netbox.device_types(ctx, f))),
        ("cables", netbox.CABLE_COLUMNS, netbox.cable_rows(f, netbox.cable_media(ctx, f), lay.length_m)),
    ):
        header, records = netbox.part_records(ctx, f, part)
        text = header + "".join(r + "\n" for chunk in records for r in chunk)
        assert text == writer_text([columns, *rows]), part
        assert 'leaf ""A"", 1' in text
