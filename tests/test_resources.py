"""Bundled templates through topogen.util.resources; `topogen presets` / `topogen catalogs`; "did you mean"."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from topogen.cli import main
from topogen.util import resources

ROOT = Path(__file__).resolve().parent.parent


def test_every_template_kind_is_found_through_resources():
    kinds = sorted(p.name for p in (ROOT / "templates").iterdir() if p.is_dir() and p.name != "__pycache__")
    assert {"clusters", "catalogs"} <= set(kinds)
    for kind in kinds:
        names = resources.template_names(kind)
        assert names == sorted(p.stem for p in (ROOT / "templates" / kind).glob("*.yaml"))
        for name in names:
            assert Path(str(resources.template_path(kind, name))).read_bytes() == (ROOT / "templates" / kind / f"{name}.yaml").read_bytes()
    assert resources.template_path("clusters", "no-such") is None
    assert resources.template_names("no-such-kind") == []


def test_descriptions_are_one_line_from_the_leading_comment():
    for kind in ("clusters", "catalogs"):
        for t in resources.list_templates(kind):
            assert t.description and "\n" not in t.description and len(t.description) <= 120, (kind, t)
    assert resources.describe("# A thing: details.\n# more\nname: x\n") == "A thing: details."
    assert resources.describe("name: x\n# late comment\n") == ""
    assert resources.describe("#\n# " + "word " * 40 + "\n") .endswith("…")


def test_presets_and_catalogs_commands():
    res = CliRunner().invoke(main, ["presets"])
    assert res.exit_code == 0
    rows = [line.split(None, 1) for line in res.output.splitlines()]
    assert [r[0] for r in rows] == resources.template_names("clusters")
    assert dict(rows)["demo"].startswith("A small demo cluster")
    res = CliRunner().invoke(main, ["catalogs"])
    assert res.exit_code == 0
    assert [line.split()[0] for line in res.output.splitlines()] == resources.template_names("catalogs")


def test_did_you_mean(tmp_path):
    res = CliRunner().invoke(main, ["build", "dmeo", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "no preset named 'dmeo' (did you mean 'demo'?)" in res.stderr
    res = CliRunner().invoke(main, ["build", "demo", "--catalog", "papr", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "unknown catalog 'papr' (did you mean 'paper'?)" in res.stderr
    res = CliRunner().invoke(main, ["build", "demo", "--catalog", "zzzz", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "did you mean" not in res.stderr
    assert not (tmp_path / "o").exists()
