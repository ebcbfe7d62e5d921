"""CSV injection: no CSV topogen writes holds a cell a spreadsheet reads as a formula.

Every text of a hostile catalog (media names, SKUs, descriptions, manufacturers,
sources) starts a formula, or hides one after a ``;`` or ``,``. Every CSV of every
exporter is opened in LibreOffice with ``,`` and with ``;`` as the separator,
formulas evaluated and spaces trimmed (the most credulous import), and every
cell is read back from the converted workbook: none is a formula, and no text
cell starts with ``= + - @`` unless it is a plain number.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest
import yaml
from click.testing import CliRunner

from topogen.cli import main
from topogen.util.text import csv_field

ROOT = Path(__file__).resolve().parent.parent
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
EVIL = ['=HYPERLINK("http://x","y")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "a;=1+1", "b, =2+2", 'c;"=3+3"', " =4+4"]
SEPARATORS = {",": 44, ";": 59}


def hostile_catalog(path: Path) -> None:
    """ndr-400g with every free text a formula (SKUs are letters, digits and ``. _ / + ( ) -`` from a letter or digit: no formula)."""
    data = yaml.safe_load((ROOT / "templates" / "catalogs" / "ndr-400g.yaml").read_text())
    n = iter(range(10_000))
    for key in ("switches", "transceivers", "cables", "nics"):
        for item in data.get(key) or []:
            i = next(n)
            item["description"] = EVIL[(i + 1) % len(EVIL)]
            item["manufacturer"] = EVIL[(i + 2) % len(EVIL)]
            item["price_source"] = EVIL[(i + 3) % len(EVIL)]
            item["power_source"] = EVIL[(i + 4) % len(EVIL)]
    for i, rule in enumerate(data["media"]):
        rule["name"] = f"{EVIL[i % len(EVIL)]} media {i}"
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(scope="module")
def csvs(tmp_path_factory) -> dict[str, Path]:
    """Every CSV of a build with the hostile catalog, flat in one directory (the pull sheets of rack pairs: three per architecture)."""
    root = tmp_path_factory.mktemp("inject")
    hostile_catalog(root / "evil.yaml")
    res = CliRunner().invoke(main, ["build", "--name", "evil", "--gpus", "512", "--hb-domain", "8", "--radix", "64", "--catalog", str(root / "evil.yaml"), "--formats", "cabling,pull-sheets,bom,netbox", "--out", str(root / "o")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    flat = root / "flat"
    flat.mkdir()
    out = {}
    sheets: dict[Path, int] = {}
    for p in sorted((root / "o").rglob("*.csv")):
        rel = p.relative_to(root / "o").as_posix()
        if p.parent.name == "pull-sheets":
            sheets[p.parent] = sheets.get(p.parent, 0) + 1
            if sheets[p.parent] > 3:
                continue
        q = flat / (rel.replace("/", "__"))
        shutil.copy(p, q)
        out[rel] = q
    return out


def test_hostile_text_reaches_every_csv(csvs):
    """The test is worth something: the catalog's text is in cabling.csv, the pull sheets, bom.csv and NetBox's files."""
    text = {rel: p.read_text() for rel, p in csvs.items()}

    def evil(t: str) -> bool:
        return any(marker in t for marker in ("HYPERLINK", "cmd|", "SUM(A1)", "=1+1", "=2+2", "=3+3", "=4+4", "-2+3"))

    for name in ("cabling.csv", "pull-sheets.csv", "bom.csv", "cable-lengths.csv"):
        assert any(rel.endswith(name) and evil(t) for rel, t in text.items()), name
    for kind in ("-device-type-", "-manufacturer-"):  # netbox/shared/<n>-<kind>-<slug>.csv, one file per object
        assert any("netbox/shared/" in rel and kind in rel and evil(t) for rel, t in text.items()), kind
    assert any("/pull-sheets/" in rel and evil(t) for rel, t in text.items())


def libreoffice_cells(files: list[Path], sep: str, outdir: Path) -> dict[Path, list[openpyxl.cell.Cell]]:
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        pytest.skip("LibreOffice (libreoffice-calc-nogui) is not installed; .ci/run installs it")
    # separator, quote ", UTF-8, from line 1, no column formats, language, quoted fields not as text,
    # no special numbers, -, -, trim spaces, -, evaluate formulas
    infilter = f"CSV:{SEPARATORS[sep]},34,76,1,,0,false,false,false,false,true,false,true"
    res = subprocess.run(
        [soffice, "--headless", "--norestore", f"-env:UserInstallation=file://{outdir}/profile", f"--infilter={infilter}", "--convert-to", "xlsx", "--outdir", str(outdir), *map(str, files)],
        capture_output=True, text=True, timeout=900,
    )
    got = {}
    for f in files:
        x = outdir / (f.stem + ".xlsx")
        assert x.exists(), res.stdout + res.stderr
        got[f] = [c for row in openpyxl.load_workbook(x).active.iter_rows() for c in row]
    return got


@pytest.mark.parametrize("sep", list(SEPARATORS))
def test_no_csv_cell_is_a_formula_in_libreoffice(csvs, tmp_path, sep):
    cells = libreoffice_cells(list(csvs.values()), sep, tmp_path)
    bad = []
    for f, cs in cells.items():
        for c in cs:
            v = c.value
            if c.data_type == "f" or (isinstance(v, str) and v.startswith(("=", "+", "-", "@")) and not NUMBER.fullmatch(v)):
                bad.append((f.name, c.coordinate, v))
    assert not bad, bad[:10]


@pytest.mark.parametrize("text", EVIL)
def test_the_rule_neutralises_every_cell_start(text):
    """:func:`csv_field` on its own: at every place a separator could start a cell, no formula character leads."""
    field = csv_field(text)
    for sep in (",", ";", "\t"):
        for cell in field.split(sep):
            cell = cell.strip(' "')
            assert not cell.startswith(("=", "+", "-", "@")) or NUMBER.fullmatch(cell), (text, field, sep, cell)


@pytest.mark.parametrize(("value", "field"), [("rail0-leaf", "rail0-leaf"), ("-5", "-5"), (-5, "-5"), ("+1.5e3", "+1.5e3"), ("x;-3", '"x;-3"'), ("a,b", '"a,b"'), ("=1", "'=1"), ("a;=1", "\"a;'=1\""), (" =1", " '=1"), ("", "")])
def test_the_rule_leaves_names_and_numbers(value, field):
    assert csv_field(value) == field
