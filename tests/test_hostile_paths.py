"""Paths the system refuses (a name too long) and values far too long: exit 2, one bounded line, no traceback.

Every command checks its inputs first; these cases reach the places where a path is
only probed (is it a file? a directory?) and the program's last line of defence in
``topogen/__main__.py``. Each runs the real entry point in a subprocess.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from topogen.util.errors import MAX_TEXT, Problem

LONG = "/tmp/x" + "9" * 5000  # longer than any file name the kernel accepts (ENAMETOOLONG)
DIGITS = "9" * 5000

CASES = {
    "build-spec-path": ["build", LONG],
    "build-out": ["build", "demo", "--out", LONG],
    "build-catalog": ["build", "demo", "--catalog", LONG + ".yaml"],
    "validate-path": ["validate", LONG],
    "validate-spec-opt": ["validate", "cabling.csv", "--spec", LONG],
    "analyze-spec-path": ["analyze", "iteration", LONG],
    "analyze-batch": ["analyze", "iteration", "gh200-32k", "--batch", DIGITS],
    "diff-as-built": ["diff", "nowhere", LONG],
}


@pytest.mark.parametrize("args", CASES.values(), ids=CASES.keys())
def test_refused_with_one_bounded_error(args, tmp_path):
    r = subprocess.run([sys.executable, "-m", "topogen", *args], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith(("error:", "Usage:")), r.stderr[:300]
    assert len(r.stderr) < 3 * MAX_TEXT, len(r.stderr)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_problem_text_is_cut_in_the_middle():
    p = Problem("batch", "not a batch: " + DIGITS, "hint " + DIGITS)
    assert len(p.message) <= MAX_TEXT + 60 and len(p.hint) <= MAX_TEXT + 60
    assert p.message.startswith("not a batch: 999") and p.message.endswith("999")
    assert "characters cut" in p.message
    assert Problem("x", "short", "hint").render() == "x: short; hint"
