"""The README is a front page, the documentation pages render, and each page keeps the facts
other tests rely on users finding there.

The README: about 150 lines; the two set-up commands and the prerequisites; one picture; links
into the site; nothing that names a file outside the repository. Every page (README and
``docs/``): tables without a blank line inside, and no ``<word>`` outside code swallowed as HTML.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
# top-level entries of the repository a path in the README may start with
REPO_TOP = {p.name for p in ROOT.iterdir() if not p.name.startswith(".") or p.name == ".ci"}


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """Lines outside fenced code blocks, with code spans and HTML comments removed."""
    out, fence = [], False
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if not fence:
            out.append((no, re.sub(r"<!--.*?-->", "", re.sub(r"`[^`]*`", "", line))))
    return out


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_no_raw_angle_brackets_outside_code(path):
    bad = [(no, line) for no, line in prose_lines(path) if re.search(r"<[a-zA-Z][^<>]*>", line) and "<br" not in line]
    assert bad == [], bad


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_tables_have_no_blank_line_inside(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    for i in range(1, len(lines) - 1):
        if lines[i] == "" and lines[i - 1].startswith("|") and lines[i + 1].startswith("| `"):
            raise AssertionError(f"{path.name} line {i + 1}: a blank line splits a table")


def test_readme_is_a_front_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 170
    for needle in ("python3-venv", "make run", "make test", "`topogen build", "`topogen validate", "`topogen compare", "`topogen analyze", "`topogen diff"):
        assert needle in text, needle
    assert len(re.findall(r"!\[[^\]]*\]\(", text)) == 1, "one picture"
    assert "arXiv 2307.12169" in text


def test_readme_links_and_paths_are_in_the_repository():
    """Every relative link resolves, and every path in code spans names a file or folder of the repo."""
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert len([u for u in links if u.startswith("docs/")]) >= 15, "links into the site"
    for target in links:
        if re.match(r"[a-z]+://", target):
            continue
        assert (ROOT / target).exists(), target
    for span in re.findall(r"`([^`\s]+)`", text):
        head = span.split("/")[0]
        if "/" in span and head in REPO_TOP | {"shared", "out"} and "*" not in span and "<" not in span:
            if head == "out":
                continue  # what a build writes
            assert (ROOT / span).exists(), span


def test_no_developer_notes_or_seed_in_user_facing_text():
    """Docs cite public sources (the rail-only paper, NVIDIA, VAST Data, Megatron-LM), never internal notes."""
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\.\./shared/|shared/(domain|analysis|style)|shared/seeds", text) and "domain.md" not in text and "analysis.md" not in text, path  # netbox/shared/ is an output folder
        for m in re.finditer(r"\bseeds?\b", text, re.I):
            line = text[text.rfind("\n", 0, m.start()) + 1 : text.find("\n", m.end())]
            assert "random" in line.lower(), f"{path.name}: {line}"


def test_docs_list_formats_exit_codes_and_tools():
    """What users look up, on the page where it now lives."""
    running = (DOCS / "running.md").read_text(encoding="utf-8")
    for needle in ("| 2 | bad input", "| 1 | the design failed validation", "| 130 |", "`--quiet`", "`--jobs N`"):
        assert needle in running, needle
    for page, title in (("netbox.md", "# NetBox"), ("slurm.md", "# Slurm"), ("workbook.md", "# The workbook in LibreOffice and Excel"), ("networkx.md", "# networkx and GraphML"), ("infiniband.md", "# InfiniBand"), ("diagrams.md", "# Diagrams")):
        assert (DOCS / "exports" / page).read_text(encoding="utf-8").startswith(title), page
    from topogen.exports import EXPORTERS

    outputs = (DOCS / "exports" / "index.md").read_text(encoding="utf-8")
    for name in EXPORTERS:
        assert f"| `{name}` |" in outputs, name


def python_block(path: Path) -> str:
    m = re.search(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    assert m, path
    return m.group(1)


def test_library_snippet_runs(tmp_path):
    """The README's "As a library" snippet (the same as the library page's) runs and prints what it says."""
    code = python_block(README)
    assert code == python_block(DOCS / "library.md")
    for name in ("from topogen import pipeline", "from topogen.fabric.graph import to_networkx", "from topogen.spec import load_spec"):
        assert name in code
    res = subprocess.run([sys.executable, "-c", code + "print(g.number_of_nodes(), g.number_of_edges())\n"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    valid, cost, nodes, edges = res.stdout.split()
    assert valid == "True" and float(cost) > 0 and (int(nodes), int(edges)) == (64 + 4, 64)


def test_outputs_page_lists_the_cabling_columns():
    """The documented columns of cabling.csv are the exporter's, in its order."""
    from topogen.exports.installers import cabling

    outputs = (DOCS / "exports" / "index.md").read_text(encoding="utf-8")
    assert f"`{', '.join(cabling.COLUMNS)}`" in outputs
    assert f"`{', '.join(cabling.FLOOR_COLUMNS)}`" in outputs
