"""The documentation site: it builds strictly, its generated references match the schema, and
the README is a front page that points only at files in the repository.

``mkdocs build --strict`` fails on a broken link, a missing page, a page left out of the nav
or a stale generated reference (the hook in ``tools/docs_reference.py``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from topogen.cli import main
from topogen.exports import EXPORTERS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
sys.path.insert(0, str(ROOT / "tools"))
import docs_reference  # noqa: E402


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of the site under ``root`` (not --quiet: it hides warnings from strict)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's end-of-life banner, not a warning of the site
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(root / "mkdocs.yml"), "--site-dir", str(site)], cwd=root, env=env, capture_output=True, text=True)


def test_mkdocs_build_strict(tmp_path):
    res = mkdocs_build(ROOT, tmp_path / "site")
    assert res.returncode == 0, res.stdout + res.stderr
    site = tmp_path / "site"
    for md in DOCS.rglob("*.md"):
        rel = md.relative_to(DOCS).with_suffix("")
        html = site / ("index.html" if rel.name == "index" and rel.parent == Path(".") else rel.parent / "index.html" if rel.name == "index" else rel / "index.html")
        assert html.exists(), f"{md} has no page in the site"


def test_a_broken_link_fails_the_build(tmp_path):
    """The strict build is a real check: one dead link in a copy of the site aborts it."""
    import shutil

    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copytree(ROOT / "tools", tmp_path / "tools")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    p = tmp_path / "docs" / "getting-started.md"
    p.write_text(p.read_text(encoding="utf-8") + "\nSee [nowhere](no-such-page.md).\n", encoding="utf-8")
    res = mkdocs_build(tmp_path, tmp_path / "site")
    assert res.returncode != 0 and "no-such-page.md" in res.stderr, res.stderr


def test_every_page_is_in_the_nav():
    import yaml

    nav = json.dumps(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nhooks:")[0])["nav"])
    for md in DOCS.rglob("*.md"):
        assert f'"{md.relative_to(DOCS).as_posix()}"' in nav, md


@pytest.mark.parametrize("kind", ["spec", "catalog"])
def test_reference_is_generated_from_the_schema(kind):
    """The committed page is what the generator writes now (run python tools/docs_reference.py)."""
    assert docs_reference.PAGES[kind].read_text(encoding="utf-8") == docs_reference.render(kind)


@pytest.mark.parametrize("kind", ["spec", "catalog"])
def test_reference_uses_what_topogen_schema_prints(kind):
    res = CliRunner().invoke(main, ["schema", kind])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == docs_reference.schema(kind)


@pytest.mark.parametrize("kind", ["spec", "catalog"])
def test_reference_lists_every_field_with_default_and_example(kind):
    """Every property of every section is a row; a default and an example show where the schema has one."""
    text = docs_reference.PAGES[kind].read_text(encoding="utf-8")
    doc = docs_reference.schema(kind)
    sections = {"Top level": doc, **doc["$defs"]}
    for title, obj in sections.items():
        part = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
        rows = {r.split("|")[1].strip().strip("`"): r for r in part.splitlines() if r.startswith("| `")}
        assert list(rows) == list(obj["properties"]), title
        for name, p in obj["properties"].items():
            if "default" in p:
                assert f"`{json.dumps(p['default']) if not isinstance(p['default'], str) else p['default']}`" in rows[name], (title, name)
            if p.get("examples"):
                assert rows[name].rstrip(" |").endswith("`"), (title, name)


def test_stale_reference_is_caught(monkeypatch, tmp_path):
    """A page edited by hand (or left behind by a field-table change) is reported, and --check fails."""
    stale = tmp_path / "spec.md"
    stale.write_text(docs_reference.render("spec").replace("| `gpus` |", "| `gpu_count` |"), encoding="utf-8")
    monkeypatch.setitem(docs_reference.PAGES, "spec", stale)
    assert docs_reference.stale() == [str(stale)]
    assert docs_reference.main(["--check"]) == 1


def test_validation_page_lists_every_check_id():
    from topogen.checks.findings import CHECK_IDS

    text = page("validation.md")
    rows = re.findall(r"^\|[^|]*\| `([a-z]+\.[a-z-]+)` \|", text, re.M)
    assert rows == list(CHECK_IDS)
