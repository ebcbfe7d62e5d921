"""The README renders: tables have no blank line inside, and no ``<word>`` outside code is swallowed as HTML."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def prose_lines() -> list[tuple[int, str]]:
    """Lines outside fenced code blocks, with code spans removed."""
    out, fence = [], False
    for no, line in enumerate(README.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if not fence:
            out.append((no, re.sub(r"`[^`]*`", "", line)))
    return out


def test_no_raw_angle_brackets_outside_code():
    bad = [(no, line) for no, line in prose_lines() if re.search(r"<[a-zA-Z][^<>]*>", line) and "<br" not in line]
    assert bad == [], bad


def test_tables_have_no_blank_line_inside():
    lines = README.read_text(encoding="utf-8").splitlines()
    for i in range(1, len(lines) - 1):
        if lines[i] == "" and lines[i - 1].startswith("|") and lines[i + 1].startswith("| `"):
            raise AssertionError(f"README line {i + 1}: a blank line splits a table")


def test_readme_lists_formats_prerequisites_exit_codes_and_tools():
    text = README.read_text(encoding="utf-8")
    for needle in ("python3-venv", "make", "| 2 | bad input", "### NetBox", "### Slurm", "### The workbook in LibreOffice and Excel", "### networkx and GraphML", "`--quiet`"):
        assert needle in text, needle
    from topogen.exports import EXPORTERS

    for name in EXPORTERS:
        assert f"`{name}`" in text, name
