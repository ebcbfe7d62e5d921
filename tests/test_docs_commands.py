"""Every command in the documentation runs, and prints what the page says it prints.

The pages' ``console`` and ``sh`` blocks are found and run by :mod:`docs_commands` (its docstring
states the conventions: ``$`` prompts, ``...`` elisions, skip comments). One test per page: the
commands of a page share its output directory, in page order.
"""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

import pytest

import docs_commands as dc

PAGES = [p for p in dc.pages() if dc.page_commands(p)]


def test_pages_have_commands():
    """The runner finds the commands (an empty list would pass every page below)."""
    assert len(PAGES) >= 10, [str(p) for p in PAGES]
    assert sum(len(dc.page_commands(p)) for p in PAGES) >= 40


def test_skipped_blocks_name_the_test_that_covers_them():
    for block in dc.skipped_blocks():
        tests = [w for w in block.skip.replace(",", " ").split() if w.startswith("tests/")]
        assert tests, f"{block.page}:{block.line}: a skipped block names the test that runs it instead ({block.skip!r})"
        for t in tests:
            assert (dc.ROOT / t.rstrip(".);")).exists(), f"{block.page}:{block.line}: {t} does not exist"


def test_ellipsis_rules():
    assert dc.matches(["a", "...", "z"], "a\nb\nc\nz")
    assert dc.matches(["a", "...", "z"], "a\nz")
    assert dc.matches(["x ... y"], "x 1 2 3 y")
    assert not dc.matches(["x ... y"], "x 1\n2 y")
    assert not dc.matches(["a", "z"], "a\nb\nz")
    assert not dc.matches(["a"], "a\nextra")
    assert dc.matches([], "")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(dc.ROOT)) for p in PAGES])
def test_page_commands(page: Path, tmp_path: Path):
    for name in dc.LINKED:
        (tmp_path / name).symlink_to(dc.ROOT / name)
    env = dc.environment(Path(sys.executable).parent)
    for cmd in dc.page_commands(page):
        code, out = dc.run(cmd, tmp_path, env)
        where = f"{cmd.page}:{cmd.line}: $ {cmd.text}"
        assert code == 0, f"{where}\nexit {code}\n{out}"
        if cmd.expected is not None and not dc.matches(cmd.expected, out):
            diff = "\n".join(difflib.unified_diff(cmd.expected, out.splitlines(), "page", "actual", lineterm=""))
            pytest.fail(f"{where}\noutput differs from the page:\n{diff}")
