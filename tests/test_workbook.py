"""The procurement workbook ``<name>.xlsx``, read back with openpyxl.

Values, formulas (checked by evaluating them with the small evaluator below,
since openpyxl stores no computed values), number formats, frozen headers,
filters, the native chart, the split of long sheets, formula injection,
byte-identical output, and the streamed rows against openpyxl's own writer.
"""

from __future__ import annotations

import csv
import re
import shutil
import zipfile
from dataclasses import replace
from pathlib import Path

import openpyxl
from openpyxl.utils import get_column_letter
import pytest
import yaml
from click.testing import CliRunner

from topogen import __version__, pipeline
from topogen.cli import main
from topogen.exports.workbook import book as wbx
from topogen.exports.workbook import stream as workbook_stream
from topogen.exports.installers.cabling import generate_rows
from topogen.layout.labels import FloorView
from topogen.spec.cluster import build_spec, load_spec
from topogen.util.resources import template_path

EVIL = "=cmd|' /C calc'!A0"


def make_ctx(spec):
    """The build context the exporter renders: fabrics, BOMs and validation reports."""
    ctx = pipeline.build(spec)
    assert ctx.boms and ctx.reports
    return ctx


def write(ctx, tmp_path, name="w.xlsx", **kw) -> Path:
    path = tmp_path / name
    wbx.write_workbook(ctx, path, **kw)
    return path


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    ctx = make_ctx(load_spec("demo"))
    path = write(ctx, tmp_path_factory.mktemp("wb"))
    return ctx, openpyxl.load_workbook(path)


# --- a tiny evaluator for the formulas the workbook writes --------------------------------

REF = re.compile(r"(?:'((?:[^']|'')+)'!)?\$?([A-Z]{1,3})\$?(\d+)(?::\$?([A-Z]{1,3})\$?(\d+))?")
IF_ZERO = re.compile(r'^IF\(([A-Z]+\d+)=0,"",(.+)\)$')


class Calc:
    """Evaluates ``=A1*B1``, ``=SUM(..)``, ``=SUMIF(..)``, references across sheets, ``IF(x=0,"",..)``."""

    def __init__(self, wb):
        self.wb = wb

    def value(self, sheet: str, coord: str):
        c = self.wb[sheet][coord]
        if c.data_type == "f":
            return self.eval(sheet, c.value)
        return c.value

    def _ref(self, sheet, c1, r1, c2=None, r2=None):
        if c2 is None:
            return self.value(sheet, f"{c1}{r1}")
        return [self.value(sheet, f"{c}{r}") for r in range(int(r1), int(r2) + 1) for c in _cols(c1, c2)]

    def eval(self, sheet: str, formula: str):
        body = formula[1:]
        m = IF_ZERO.match(body)
        if m:
            return "" if self.value(sheet, m.group(1)) == 0 else self.eval(sheet, "=" + m.group(2))

        def sub(m):
            s = (m.group(1) or sheet).replace("''", "'")
            return f"_R({s!r}, {m.group(2)!r}, {m.group(3)}, {m.group(4)!r}, {m.group(5)!r})" if m.group(4) else f"_R({s!r}, {m.group(2)!r}, {m.group(3)})"

        expr = REF.sub(sub, body)
        env = {
            "_R": self._ref,
            "SUM": lambda xs: sum(x for x in xs if isinstance(x, (int, float))),
            "SUMIF": lambda crit, want, vals: sum(v for c, v in zip(crit, vals) if str(c).lower() == want.lower()),
        }
        return eval(expr, env)  # noqa: S307 - test-only, formulas written by us


def _cols(c1, c2):
    from openpyxl.utils import column_index_from_string, get_column_letter

    return [get_column_letter(i) for i in range(column_index_from_string(c1), column_index_from_string(c2) + 1)]


def summary_row(ws, label: str) -> int:
    for row in ws.iter_rows(min_col=1, max_col=1):
        if row[0].value == label:
            return row[0].row
    raise AssertionError(f"no row {label!r} on {ws.title}")


# --- structure, provenance ---------------------------------------------------------------


def test_sheets_in_order(demo):
    _ctx, wb = demo
    assert wb.sheetnames == [
        "Decision",
        "Summary",
        "BOM rail-optimized",
        "BOM rail-only",
        "Cabling rail-optimized",
        "Cabling rail-only",
        "Ports rail-optimized",
        "Ports rail-only",
        "Validation",
    ]


def test_provenance_in_properties_and_summary(demo):
    ctx, wb = demo
    digest = ctx.spec.digest()
    assert wb["Summary"]["B3"].value == digest
    assert wb["Summary"]["B2"].value == f"topogen {__version__}"
    assert wb.properties.creator == f"topogen {__version__}"
    assert digest in wb.properties.keywords
    custom = {p.name: p.value for p in wb.custom_doc_props.props}
    assert custom == {"generator": f"topogen {__version__}", "spec_sha256": digest}


def test_headers_frozen_filtered_and_sized(demo):
    _ctx, wb = demo
    for name in wb.sheetnames[2:]:
        ws = wb[name]
        assert ws.freeze_panes in ("A2", "B2"), name
        assert ws.auto_filter.ref and ws.auto_filter.ref.startswith("A1:"), name
        assert ws.column_dimensions["A"].width >= 16, name
        assert ws["A1"].font.b, name


# --- BOM sheets ------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_bom_rows_formulas_and_formats(demo, arch):
    ctx, wb = demo
    ws = wb[f"BOM {arch}"]
    lines = ctx.boms[arch].sku_lines()
    assert [c.value for c in ws[1]] == list(wbx.BOM_COLUMNS)
    for r, x in enumerate(lines, 2):
        assert [ws.cell(r, c).value for c in (1, 3, 5, 6, 8)] == [x.sku, x.category, x.quantity, x.unit_price, x.unit_power_w]
        assert ws[f"G{r}"].value == f"=E{r}*F{r}"
        assert ws[f"I{r}"].value == f"=E{r}*H{r}/1000"  # kW
        assert ws[f"F{r}"].number_format == wbx.MONEY and ws[f"G{r}"].number_format == wbx.MONEY
        assert ws[f"E{r}"].number_format == wbx.COUNT
    total = len(lines) + 2
    assert ws[f"A{total}"].value == "Total"
    assert ws[f"G{total}"].value == f"=SUM(G2:G{total - 1})"
    assert ws[f"I{total}"].value == f"=SUM(I2:I{total - 1})"
    calc = Calc(wb)
    assert calc.value(ws.title, f"G{total}") == pytest.approx(ctx.boms[arch].cost)
    assert calc.value(ws.title, f"I{total}") == pytest.approx(ctx.boms[arch].power_w / 1000)


# --- Summary: totals, savings, chart ---------------------------------------------------------


def test_summary_totals_evaluate_to_the_bom(demo):
    ctx, wb = demo
    ws = wb["Summary"]
    calc = Calc(wb)
    want = {
        "Switches": "switches",
        "Transceivers": "transceivers",
        "Cables": "cables",
        "Cost (USD)": "cost",
        "Power (kW)": "power_w",
        "Cost per GPU (USD)": "cost_per_gpu",
        "Power per GPU (W)": "power_per_gpu_w",
    }
    for label, key in want.items():
        r = summary_row(ws, label)
        scale = 1000 if label == "Power (kW)" else 1
        for col, arch in (("B", "rail-optimized"), ("C", "rail-only")):
            assert calc.value("Summary", f"{col}{r}") == pytest.approx(ctx.boms[arch].totals()[key] / scale, abs=0.01), (label, arch)
    r = summary_row(ws, "Cost (USD)")
    opt, ro = ctx.boms["rail-optimized"].cost, ctx.boms["rail-only"].cost
    assert calc.value("Summary", f"D{r}") == pytest.approx(opt - ro)
    assert calc.value("Summary", f"E{r}") == pytest.approx((opt - ro) / opt)
    assert ws[f"E{r}"].number_format == wbx.PERCENT and ws[f"B{r}"].number_format == wbx.MONEY_WHOLE
    assert ws.cell(summary_row(ws, "Tiers"), 2).value == ctx.fabrics["rail-optimized"].tiers


def test_editing_a_unit_price_recalculates_the_summary(demo, tmp_path):
    ctx, _wb = demo
    wb = openpyxl.load_workbook(write(ctx, tmp_path))
    ws = wb["BOM rail-only"]
    r = next(row[0].row for row in ws.iter_rows(min_row=2, max_col=3) if row[2].value == "switch")
    qty, old = ws[f"E{r}"].value, ws[f"F{r}"].value
    ws[f"F{r}"].value = old + 1000
    ws[f"E{r}"].value = qty + 2
    cost = summary_row(wb["Summary"], "Cost (USD)")
    want = ctx.boms["rail-only"].cost - qty * old + (qty + 2) * (old + 1000)
    assert Calc(wb).value("Summary", f"C{cost}") == pytest.approx(want)
    assert Calc(wb).value("Summary", f"C{summary_row(wb['Summary'], 'Switches')}") == qty + 2


def test_chart_compares_cost_by_component(demo):
    ctx, wb = demo
    ws = wb["Summary"]
    charts = ws._charts
    assert len(charts) == 1
    chart = charts[0]
    assert chart.tagname == "barChart"
    head = summary_row(ws, "Cost by component (USD)")
    assert [s.tx.strRef.f.replace("$", "") for s in chart.series] == [f"'Summary'!B{head}", f"'Summary'!C{head}"]
    assert [s.val.numRef.f.replace("$", "") for s in chart.series] == [f"'Summary'!B{head + 1}:B{head + 3}", f"'Summary'!C{head + 1}:C{head + 3}"]
    assert [ws.cell(head + i, 1).value for i in (1, 2, 3)] == ["Switches", "Transceivers", "Cables"]
    calc = Calc(wb)
    for col, arch in (("B", "rail-optimized"), ("C", "rail-only")):
        parts = [calc.value("Summary", f"{col}{head + i}") for i in (1, 2, 3)]
        assert sum(parts) == pytest.approx(ctx.boms[arch].cost)


def test_single_architecture_has_no_savings_columns(tmp_path):
    ctx = make_ctx(build_spec({"name": "one", "gpus": 64, "hb_domain": 8, "radix": 16, "arch": "rail-only"}))
    wb = openpyxl.load_workbook(write(ctx, tmp_path))
    assert "BOM rail-optimized" not in wb.sheetnames
    ws = wb["Summary"]
    head = summary_row(ws, "Totals")
    assert [c.value for c in ws[head]] == ["Totals", "rail-only"]
    assert ws.max_column == 2
    assert len(ws._charts) == 1


# --- Cabling ----------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_cabling_rows_match_the_wiring(demo, arch):
    ctx, wb = demo
    fabric = ctx.fabrics[arch]
    ws = wb[f"Cabling {arch}"]
    rows = list(ws.iter_rows(values_only=True))
    assert rows[0] == wbx.CABLING_COLUMNS + wbx.FLOOR_COLUMNS
    assert rows[0][:6] == ("A-Node Name", "A-Type", "A-Port", "Z-Node Name", "Z-Type", "Z-Port")
    media = ctx.boms[arch].media
    lay = ctx.layouts[arch]
    p, racks = lay.placement, lay.racks.name
    labels = FloorView(fabric, lay).labels(slice(0, len(fabric.links)))
    L = fabric.links
    want = [
        (an, "HCA" if ar == "gpu" else "SW", ap, zn, "SW", zp, cable, tier, link, plane, sp, wbx.short_media(media[tier].name), media[tier].length_class,
         int(lay.length_m[cable - 1]), racks[p.rack[L.a_dev[cable - 1]]], int(p.u[L.a_dev[cable - 1]]), racks[p.rack[L.z_dev[cable - 1]]], int(p.u[L.z_dev[cable - 1]]), labels[cable - 1])
        for cable, tier, link, plane, an, ar, ap, sp, zn, _zr, zp, _zs in generate_rows(fabric)
    ]
    assert rows[1:] == want
    assert ws.auto_filter.ref == f"A1:S{len(fabric.links) + 1}"


def test_cabling_sheet_agrees_with_cabling_csv(tmp_path):
    """Rack, U, length and label of every cable in the printed sheet are cabling.csv's (an installer's two copies agree)."""
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "nic200-leaf400", "--gpus", "256", "--out", str(out), "--formats", "xlsx,cabling"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    wb = openpyxl.load_workbook(out / "nic200-leaf400.xlsx", read_only=True)
    rows = list(wb["Cabling rail-optimized"].iter_rows(values_only=True))
    head = rows[0]
    with open(out / "rail-optimized" / "cabling.csv", newline="") as fh:
        csv_rows = list(csv.DictReader(fh))
    assert len(rows) - 1 == len(csv_rows)
    col = {h: i for i, h in enumerate(head)}
    for r, c in zip(rows[1:], csv_rows):
        assert (r[col["A-Rack"]], str(r[col["A-U"]]), r[col["Z-Rack"]], str(r[col["Z-U"]]), f"{r[col['Length (m)']]:g}", r[col["Label"]]) == (c["a_rack"], c["a_u"], c["z_rack"], c["z_u"], c["length_m"], c["label"])
        assert c["media"].startswith(r[col["Media"]]) and ":" not in r[col["Media"]]  # the catalog's short name
    wb.close()


def test_print_setup_keeps_every_sheet_legible(tmp_path):
    """Ports sheets of 64-port switches go a few pages across (switch names repeated), not one page at ~2 pt;
    media, worst-case path and findings wrap in their columns."""
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "--gpus", "512", "--hb-domain", "8", "--radix", "64", "--catalog", "ndr-400g", "--name", "r64", "--out", str(out), "--formats", "xlsx"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    wb = openpyxl.load_workbook(out / "r64.xlsx")
    for title in ("Ports rail-optimized", "Ports rail-only"):
        ws = wb[title]
        width = sum(ws.column_dimensions[get_column_letter(i)].width for i in range(1, ws.max_column + 1))
        pages = ws.page_setup.fitToWidth
        assert 2 <= pages <= 6 and width / pages <= wbx.PAGE_WIDTH, (title, width, pages)
        assert ws.print_title_cols == "$A:$A"
    ws = wb["Cabling rail-optimized"]
    media = ws.cell(2, wbx.CABLING_COLUMNS.index("Media") + 1)
    assert media.alignment.wrap_text and len(media.value) <= ws.column_dimensions["L"].width
    summary = wb["Summary"]
    path = next(r[1] for r in summary.iter_rows() if r[0].value == "Worst-case path")
    assert path.alignment.wrap_text
    assert all(c.anchor._from.col == 0 for c in summary._charts)  # below the table, inside the printed columns


def test_long_cabling_is_split_and_the_summary_says_so(tmp_path):
    ctx = make_ctx(load_spec("demo"))
    wb = openpyxl.load_workbook(write(ctx, tmp_path, max_rows=50))
    n = len(ctx.fabrics["rail-optimized"].links)  # 128 cables: 49 + 49 + 30
    names = [s for s in wb.sheetnames if s.startswith("Cabling rail-optimized")]
    assert names == ["Cabling rail-optimized 1", "Cabling rail-optimized 2", "Cabling rail-optimized 3"]
    got = []
    for s in names:
        rows = list(wb[s].iter_rows(values_only=True))
        assert rows[0] == wbx.CABLING_COLUMNS + wbx.FLOOR_COLUMNS and len(rows) <= 50
        assert wb[s].auto_filter.ref == f"A1:S{len(rows)}"
        got += [r[6] for r in rows[1:]]
    assert got == list(range(1, n + 1))
    notes = [r[0] for r in wb["Summary"].iter_rows(values_only=True) if r[0] and "split over 3 sheets" in str(r[0])]
    assert notes and "Cabling rail-optimized 1, Cabling rail-optimized 2, Cabling rail-optimized 3" in notes[0]
    assert "Cabling rail-only 1" in wb.sheetnames  # 64 cables: 49 + 15


def test_split_at_excels_row_limit():
    assert wbx.split("C", wbx.ROW_LIMIT - 1, wbx.ROW_LIMIT) == [wbx.Part("C", 0, wbx.ROW_LIMIT - 1)]
    parts = wbx.split("C", wbx.ROW_LIMIT, wbx.ROW_LIMIT)
    assert [p.title for p in parts] == ["C 1", "C 2"]
    assert parts[0].stop - parts[0].start == wbx.ROW_LIMIT - 1 and parts[1].stop - parts[1].start == 1


# --- Port map ----------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_port_map_lists_every_port(demo, arch):
    ctx, wb = demo
    fabric = ctx.fabrics[arch]
    rows = list(wb[f"Ports {arch}"].iter_rows(values_only=True))
    radix = fabric.spec.radix
    assert rows[0] == wbx.PORTS_FIXED + tuple(f"p{i}" for i in range(1, radix + 1))
    assert [r[0] for r in rows[1:]] == [s.name for s in fabric.switches]
    used = fabric.ports_used()
    expect: dict[tuple[str, str], str] = {}
    for _c, _t, _l, _p, an, _ar, ap, _s, zn, _zr, zp, _zs in generate_rows(fabric):
        expect[(zn, zp)] = f"{an}:{ap}"
        if ap.startswith("p"):
            expect[(an, ap)] = f"{zn}:{zp}"
    for i, row in enumerate(rows[1:]):
        assert row[5] == used[i]
        for p in range(1, radix + 1):
            assert row[5 + p] == expect.get((row[0], f"p{p}")), (row[0], p)


# --- formula injection ---------------------------------------------------------------------


def test_cell_helper_keeps_risky_text_as_text():
    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("x")
    for text in (EVIL, "+1+1", "-2", "@SUM(A1)", "=1+1"):
        c = wbx.cell(ws, text)
        assert c.data_type == "s" and c.value == text and c.quotePrefix
    plain = wbx.cell(ws, "leaf-g0-r0")
    assert plain.data_type == "s" and not plain.quotePrefix
    assert wbx.cell(ws, wbx.Formula("=A1*2")).data_type == "f"


def test_cell_text_fits_excel():
    ws = openpyxl.Workbook(write_only=True).create_sheet("x")
    long = wbx.cell(ws, "a\x01b" + "x" * 40000)
    assert len(long.value) == workbook_stream.CELL_TEXT_LIMIT and long.value.startswith("ab") and long.value.endswith(workbook_stream.TRUNCATED)


def test_key_figures_flatten_to_scalars():
    import numpy as np

    got = wbx.flatten({"a": {"b": np.int64(3), "c": [1, 2]}, "d": None, "e": np.float64(0.5)})
    assert got == [("a.b", 3), ("a.c", "1, 2"), ("d", None), ("e", 0.5)]
    assert type(got[0][1]) is int


@pytest.fixture()
def evil_catalog(tmp_path):
    data = yaml.safe_load(template_path("catalogs", "paper").read_text())
    data["switches"][0]["description"] = EVIL
    data["switches"][0]["price_source"] = "+SUM(1,2)"
    data["transceivers"][0]["power_source"] = "@HYPERLINK(\"x\")"
    data["media"][0]["name"] = "-1+2 & <fiber>"
    path = tmp_path / "evil.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("fast", [True, False], ids=["streamed", "openpyxl"])
def test_injected_catalog_text_stays_text(tmp_path, evil_catalog, fast):
    ctx = make_ctx(build_spec({"name": "evil", "gpus": 64, "hb_domain": 8, "radix": 16, "catalog": str(evil_catalog)}))
    wb = openpyxl.load_workbook(write(ctx, tmp_path, fast=fast))
    seen = set()
    for ws in wb:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value in (EVIL, "+SUM(1,2)", '@HYPERLINK("x")', "-1+2 & <fiber>"):
                    assert c.data_type == "s", (ws.title, c.coordinate)
                    assert c.quotePrefix, (ws.title, c.coordinate)
                    seen.add((ws.title.split()[0], c.value))
    assert ("BOM", EVIL) in seen and ("BOM", "+SUM(1,2)") in seen and ("BOM", '@HYPERLINK("x")') in seen
    assert ("Cabling", "-1+2 & <fiber>") in seen


def test_injected_text_is_never_a_formula_in_the_xml(tmp_path, evil_catalog):
    ctx = make_ctx(build_spec({"name": "evil", "gpus": 64, "hb_domain": 8, "radix": 16, "catalog": str(evil_catalog)}))
    with zipfile.ZipFile(write(ctx, tmp_path)) as z:
        for name in z.namelist():
            if name.startswith("xl/worksheets/sheet"):
                xml = z.read(name).decode()
                assert "cmd|" not in "".join(re.findall(r"<f>(.*?)</f>", xml)), name


# --- determinism and the two writers -------------------------------------------------------


def test_byte_identical_across_runs(tmp_path):
    a = write(make_ctx(load_spec("demo")), tmp_path, "a.xlsx")
    b = write(make_ctx(load_spec("demo")), tmp_path, "b.xlsx")
    assert a.read_bytes() == b.read_bytes()
    with zipfile.ZipFile(a) as z:
        assert {zi.date_time for zi in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        core = z.read("docProps/core.xml").decode()
    assert "1980-01-01T00:00:00Z" in core


def _cells(ws) -> list:
    """Every cell of a sheet with what a reader sees: value, type and formatting."""
    return [
        [(c.value, c.data_type, c.number_format, c.font.b, c.fill.fgColor.rgb, c.alignment.wrap_text, c.quotePrefix) for c in r]
        for r in ws.iter_rows()
    ]


def _settings(ws) -> tuple:
    cols = {k: d.width for k, d in ws.column_dimensions.items()}
    return (ws.freeze_panes, ws.auto_filter.ref, ws.print_title_rows, ws.page_setup.orientation, ws.page_setup.fitToWidth, cols, ws.max_row, ws.max_column)


def test_streamed_rows_equal_openpyxl_rows(tmp_path, evil_catalog):
    """The streamed sheets hold exactly the cells and settings openpyxl's own writer gives (split sheets, risky text, 2 planes)."""
    ctx = make_ctx(build_spec({"name": "p", "gpus": 256, "hb_domain": 8, "radix": 16, "planes": 2, "catalog": str(evil_catalog)}))
    f = ctx.fabrics["rail-only"]
    f.switches = [replace(s, name=f"=<{s.name}&>") if i % 3 == 0 else s for i, s in enumerate(f.switches)]  # risky, escaped names
    fast = openpyxl.load_workbook(write(ctx, tmp_path, "f.xlsx", fast=True, max_rows=700))
    slow = openpyxl.load_workbook(write(ctx, tmp_path, "s.xlsx", fast=False, max_rows=700))
    assert fast.sheetnames == slow.sheetnames
    assert any(s.endswith(" 2") for s in fast.sheetnames)
    for a, b in zip(fast, slow):
        assert _cells(a) == _cells(b), a.title
        assert _settings(a) == _settings(b), a.title
    assert fast["Cabling rail-only 1"]["D2"].value.startswith("=<") and fast["Cabling rail-only 1"]["D2"].quotePrefix


def test_streamed_sheets_are_lean_spreadsheetml(tmp_path):
    """No optional cell references; one shared-string table with true counts; dimension, content type and relationship present."""
    ctx = make_ctx(load_spec("demo"))
    path = write(ctx, tmp_path)
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        sst = z.read("xl/sharedStrings.xml").decode()
        sheets = {n: z.read(n).decode() for n in names if n.startswith("xl/worksheets/sheet")}
        types = z.read("[Content_Types].xml").decode()
        rels = z.read("xl/_rels/workbook.xml.rels").decode()
    assert names.count("xl/sharedStrings.xml") == 1
    assert 'PartName="/xl/sharedStrings.xml"' in types and 'relationships/sharedStrings" Target="sharedStrings.xml"' in rels
    items = re.findall(r"<si>(.*?)</si>", sst)
    refs = sum(len(re.findall(r'<c(?: s="\d+")? t="s">', x)) for x in sheets.values())
    assert f'count="{refs}" uniqueCount="{len(items)}"' in sst
    wb = openpyxl.load_workbook(path)
    for n, x in sheets.items():
        title = wb.worksheets[int(re.search(r"sheet(\d+)", n).group(1)) - 1].title
        if title.startswith(("Cabling", "Ports")):
            data = x[x.index('<row r="2"'):]
            assert not re.search(r'<c r="', data), title  # no optional cell reference in the data rows
            ws = wb[title]
            assert f'<dimension ref="A1:{openpyxl.utils.get_column_letter(ws.max_column)}{ws.max_row}"/>' in x, title


def test_streamed_sheet_of_any_columns(tmp_path):
    """The streamed writer's column kinds: integers (negative, wide), floats, text (risky, empty), gaps; what openpyxl reads back."""
    import numpy as np

    from topogen.exports.workbook import stream as st

    wb = openpyxl.Workbook(write_only=True)
    sst = st.SharedStrings()
    ws = st.new_streamed_sheet(wb, "Any")
    ws.append(["n", "f", "t", "gap", "last"])
    quote = wbx.quote_style_id(ws)
    cols = [
        st.Col(np.array([1, -5, 1234567890123])),
        st.Col(np.array([0.5, 1e-5, 3.0])),
        wbx.text_col(sst, ["a & <b>", "=x", ""], quote),
        st.Col(np.array([st.MISSING] * 3)),
        st.Col(np.array([7, st.MISSING, 9])),
    ]
    ws.rows = lambda: iter([st.rows_xml(2, 3, cols, sst)])
    ws.last_row, ws.last_col = 4, 5
    st.save_package(wb, tmp_path / "any.xlsx", sst, 1)
    got = openpyxl.load_workbook(tmp_path / "any.xlsx")["Any"]
    assert [[c.value for c in r] for r in got.iter_rows(min_row=2)] == [
        [1, 0.5, "a & <b>", None, 7],
        [-5, 1e-05, "=x", None, None],
        [1234567890123, 3.0, None, None, 9],
    ]
    assert got["C3"].data_type == "s" and got["C3"].quotePrefix and not got["C2"].quotePrefix
    assert sst.count == 2 and sst.size == 2


def test_zip64_only_where_an_entry_may_pass_2_gib(tmp_path):
    """An entry marked big gets Zip64 sizes (zipfile's limit) and still reads back; the others keep plain headers."""
    from topogen.exports.workbook import stream as st

    z = st.ZipStream(tmp_path / "z.zip", 1)
    z.entry("big.xml", [b"<a/>" * 1000, b"<b/>"], big=True)
    z.entry("small.xml", [b"<c/>"])
    z.close()
    with zipfile.ZipFile(tmp_path / "z.zip") as zf:
        assert zf.testzip() is None
        assert zf.read("big.xml") == b"<a/>" * 1000 + b"<b/>" and zf.read("small.xml") == b"<c/>"
    raw = (tmp_path / "z.zip").read_bytes()
    head = raw[: raw.index(b"small.xml")]
    assert b"\x01\x00\x10\x00" in head  # the Zip64 extra field (id 1, 16 bytes) in big.xml's local header
    ws = openpyxl.Workbook(write_only=True).create_sheet("x")
    wbx.stream_into(ws, None, 1_048_576, 20)
    assert not ws.big  # a full cabling sheet stays well under 2 GiB
    wbx.stream_into(ws, None, 1_048_576, 16_384)
    assert ws.big  # a port map of 16,384 columns may pass 2 GiB


def test_a_failing_row_source_stops_the_writer(tmp_path):
    """An error while rows stream reaches the caller (no hang of the deflate thread)."""
    from topogen.exports.workbook import stream as ws_mod

    def boom():
        yield b"<row/>"
        raise RuntimeError("row source failed")

    wb = openpyxl.Workbook(write_only=True)
    sheet = ws_mod.new_streamed_sheet(wb, "S")
    sheet.append(["h"])
    sheet.rows = boom
    with pytest.raises(RuntimeError, match="row source failed"):
        ws_mod.save_package(wb, tmp_path / "x.xlsx", ws_mod.SharedStrings(), 1)


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) not installed; .ci/run installs libreoffice-calc-nogui")
def test_libreoffice_reads_the_streamed_workbook_and_recalculates(tmp_path):
    """LibreOffice opens the workbook: every cabling and port-map cell as openpyxl's own writer has it, and the Summary's formulas computed."""
    import csv
    import subprocess

    ctx = make_ctx(build_spec({"name": "lo", "gpus": 256, "hb_domain": 8, "radix": 16, "planes": 2}))
    path = write(ctx, tmp_path, "lo.xlsx", max_rows=500)
    res = subprocess.run(
        ["soffice", "--headless", "--norestore", f"-env:UserInstallation=file://{tmp_path}/profile",
         "--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1", "--outdir", str(tmp_path), str(path)],
        capture_output=True, text=True, timeout=300,
    )
    ref = openpyxl.load_workbook(write(ctx, tmp_path, "ref.xlsx", fast=False, max_rows=500))
    compared = 0
    for ws in ref:
        if not ws.title.startswith(("Cabling", "Ports")):
            continue
        out = tmp_path / f"lo-{ws.title}.csv"
        assert out.exists(), res.stdout + res.stderr
        got = list(csv.reader(out.open(encoding="utf-8")))
        want = [["" if v is None else str(v) for v in row] for row in ws.iter_rows(values_only=True)]
        assert got == want, ws.title
        compared += 1
    assert compared == len([t for t in ref.sheetnames if t.startswith(("Cabling", "Ports"))]) >= 5  # a cabling is split
    summary = list(csv.reader((tmp_path / "lo-Summary.csv").open(encoding="utf-8")))
    cost = next(r for r in summary if r[0] == "Cost (USD)")
    for col, arch in ((1, "rail-optimized"), (2, "rail-only")):
        assert float(cost[col]) == pytest.approx(ctx.boms[arch].cost)  # the formula over the BOM sheet, computed on load
    assert float(cost[3]) == pytest.approx(ctx.boms["rail-optimized"].cost - ctx.boms["rail-only"].cost)


def test_odd_switch_names_are_escaped(tmp_path):
    ctx = make_ctx(load_spec("demo"))
    f = ctx.fabrics["rail-only"]
    f.switches = [replace(s, name=f"<{s.name}&>") for s in f.switches]
    wb = openpyxl.load_workbook(write(ctx, tmp_path))
    assert wb["Cabling rail-only"]["D2"].value == "<rail0-1-leaf&>"
    assert wb["Ports rail-only"]["A2"].value == "<rail0-1-leaf&>"


# --- Validation ------------------------------------------------------------------------------


def test_validation_sheet_has_findings_checks_and_figures(demo):
    ctx, wb = demo
    rows = list(wb["Validation"].iter_rows(values_only=True))
    assert rows[0] == wbx.FINDING_COLUMNS
    findings = [r for r in rows[1:] if r[0] in ctx.fabrics and r[2] in ("error", "warning", "info")]
    n = sum(len(ctx.reports[a].findings) for a in ctx.fabrics)
    assert len(findings) == n
    shared = [r for r in findings if r[1] == "rails.shared-switch"]
    assert shared and shared[0][0] == "rail-only" and "rail0-1-leaf" in shared[0][3]
    figures = {(r[0], r[1]): r[2] for r in rows if r[0] in ctx.fabrics and r[1] and r[1].startswith(("valid", "worst_case"))}
    assert figures[("rail-only", "valid")] is True
    assert figures[("rail-optimized", "worst_case_hops.switch_hops")] == 3


# --- through the CLI ---------------------------------------------------------------------------


def test_cli_writes_the_workbook(tmp_path):
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "demo", "--formats", "xlsx", "--out", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    wb = openpyxl.load_workbook(out / "demo.xlsx", read_only=True)
    assert wb["Summary"]["B3"].value == load_spec("demo").digest()
    shutil.rmtree(out)


# --- print layout and the estimate banner -------------------------------------------------------


def test_every_sheet_prints_landscape_one_page_wide_with_wrapped_headers(demo):
    """Every sheet one page wide, except Ports sheets: as many pages across as PAGE_WIDTH characters a page need."""
    _ctx, wb = demo
    for ws in wb.worksheets:
        assert ws.page_setup.orientation == "landscape", ws.title
        pages = 1
        if ws.title.startswith("Ports"):
            width = sum(ws.column_dimensions[get_column_letter(i)].width for i in range(1, ws.max_column + 1))
            pages = -(-int(width) // wbx.PAGE_WIDTH)
        assert ws.sheet_properties.pageSetUpPr.fitToPage and ws.page_setup.fitToWidth == pages and ws.page_setup.fitToHeight == (1 if ws.title == "Summary" else 0), ws.title  # the Summary: one page
        if ws.title not in ("Decision", "Summary", "Analysis"):
            assert ws.print_title_rows == "$1:$1", ws.title  # the header on every printed page
            assert all(c.alignment.wrap_text for c in ws[1] if c.value), ws.title


def test_estimate_banner_when_a_price_is_an_estimate(tmp_path):
    """ndr-400g prices are estimates: the Summary says so above the totals; the paper's sourced model has none."""
    ctx = pipeline.build(build_spec({"name": "x", "gpus": 1024, "hb_domain": 8, "radix": 64, "catalog": "ndr-400g"}))
    ws = openpyxl.load_workbook(write(ctx, tmp_path))["Summary"]
    assert ws["B3"].value == ctx.spec.digest()
    banner = ws["A4"].value
    assert banner.startswith("ESTIMATES, NOT QUOTES:") and "Replace them with your quotes." in banner
    est, priced = wbx.estimate_lines(ctx)
    assert 0 < est <= priced and f"{est} of {priced}" in banner


def test_leaf_pair_isls_in_the_cabling_and_port_sheets(tmp_path):
    """design: leaf-pair: the ISLs follow the links on the cabling sheets (cable ids continue, link leaf-leaf, SW at both
    ends, the ISL media) and fill the port map; streamed and openpyxl writers agree cell for cell."""
    ctx = make_ctx(load_spec("era-2-8-9-400"))
    fast = openpyxl.load_workbook(write(ctx, tmp_path, "f.xlsx", fast=True, max_rows=150))
    slow = openpyxl.load_workbook(write(ctx, tmp_path, "s.xlsx", fast=False, max_rows=150))
    assert fast.sheetnames == slow.sheetnames
    for a, b in zip(fast, slow):
        assert _cells(a) == _cells(b), a.title
    f = ctx.fabrics["rail-optimized"]
    rows = [r for ws in fast.worksheets if ws.title.startswith("Cabling rail-optimized") for r in list(ws.iter_rows(values_only=True))[1:]]
    assert len(rows) == f.cables == len(f.links) + len(f.isls) == 192
    isl = rows[len(f.links):]
    assert {(r[0], r[1], r[3], r[4], r[7], r[8]) for r in isl} == {("leaf-a", "SW", "leaf-b", "SW", 1, "leaf-leaf")}
    assert [r[6] for r in isl] == list(range(129, 193)) and all(r[2] == r[5] for r in isl)
    assert all(r[11] for r in isl)  # a media name from the BOM
    ports = list(fast["Ports rail-optimized"].iter_rows(values_only=True))
    assert [r[5] for r in ports[1:]] == [128, 128]  # GPU ports and ISL ports: both leaves full
    assert ports[1][-1] == "leaf-b:p128" and ports[2][-1] == "leaf-a:p128"
