"""``topogen search`` on hostile input (issue #35): damaged or forged results files, a results file
inside the output directory, ``objectives: []``, a space too large to walk.

A damaged line never gives a traceback; a line is reused only when its figures are well formed
and agree with the screened design (spec hash recomputed, exact closed-form figures equal, cost
and power near the estimates); otherwise it is noted and the design is built again, so a forged
``cost_usd: -1e12`` never reaches the front.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topogen.cli import main
from topogen.search.journal import HEADER, entry_problem

from test_search import SMALL  # the same small search (tests/ is on the path, as for every test module)

def invoke(args: list[str]):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def write(tmp_path: Path, data: dict) -> str:
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(p)


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    """One search with a results file: (its directory, the results lines, the JSON output)."""
    d = tmp_path_factory.mktemp("hostile-search")
    spec = write(d, SMALL)
    res = invoke(["search", spec, "--out", str(d / "o"), "--jobs", "1", "--json", "--results", str(d / "r.jsonl")])
    assert res.exit_code == 0, res.output
    return d, (d / "r.jsonl").read_text().splitlines(), json.loads(res.stdout)


def rerun(tmp_path: Path, lines: list[str]):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n")
    spec = write(tmp_path, SMALL)
    return invoke(["search", spec, "--out", str(tmp_path / "o"), "--jobs", "1", "--json", "--results", str(tmp_path / "r.jsonl")])


def entry(lines: list[str], i: int = 1) -> dict:
    return json.loads(lines[i])


def damaged_lines(lines: list[str]) -> dict[str, str]:
    e = entry(lines)
    f = e["figures"]
    out = {
        "deep-nesting": "[" * 100_000 + "]" * 100_000,
        "a list": "[1, 2]",
        "a string": '"x"',
        "no figures": json.dumps({k: v for k, v in e.items() if k != "figures"}),
        "figures a list": json.dumps({**e, "figures": [1]}),
        "figures lack cost": json.dumps({**e, "figures": {k: v for k, v in f.items() if k != "cost_usd"}}),
        "cost a string": json.dumps({**e, "figures": {**f, "cost_usd": "cheap"}}),
        "tiers null": json.dumps({**e, "figures": {**f, "tiers": None}}),
        "switches_per_tier a number": json.dumps({**e, "figures": {**f, "switches_per_tier": 5}}),
        "sha an int": json.dumps({**e, "spec_sha256": 5}),
        "sha of another": json.dumps({**e, "spec_sha256": "0" * 64}),
        "nan power": json.dumps({**e, "figures": {**f, "power_w": float("nan")}}),
        "huge int": json.dumps({**e, "figures": {**f, "links": 10**400}}),
    }
    return out


def test_damaged_lines_never_give_a_traceback(first, tmp_path):
    _, lines, got = first
    for name, bad in damaged_lines(lines).items():
        res = rerun(tmp_path / name.replace(" ", "-"), [lines[0], bad, *lines[1:]])
        assert res.exit_code == 0, (name, res.output[-2000:])
        out = json.loads(res.stdout)
        assert out["front"] == got["front"] and out["chosen"] == got["chosen"], name


@pytest.mark.parametrize("forged", [{"cost_usd": -1e12}, {"cost_usd": 1}, {"cost_usd": 0.5}, {"power_w": 1}, {"tiers": 1, "switches_per_tier": [320], "links_per_tier": [12288]}, {"iteration_s": 0.001}])
def test_a_forged_figure_never_lands_on_the_front(first, tmp_path, forged):
    _, lines, got = first
    e = entry(lines)
    e["figures"].update(forged)
    res = rerun(tmp_path, [lines[0], json.dumps(e), *lines[2:]])
    assert res.exit_code == 0, res.output[-2000:]
    out = json.loads(res.stdout)
    assert out["front"] == got["front"] and out["chosen"] == got["chosen"]
    assert out["stats"]["built"] >= 1  # the forged line's design was built again
    assert "(not reused)" in res.stderr, res.stderr
    for row in out["rows"]:
        assert row.get("cost_usd") is None or row["cost_usd"] >= 0


def test_entry_problem_accepts_what_search_writes(first):
    _, lines, _ = first
    assert json.loads(lines[0]) == HEADER
    assert all(entry_problem(json.loads(x)) is None for x in lines[1:])


def test_results_inside_the_output_directory_is_refused_up_front(tmp_path):
    spec = write(tmp_path, SMALL)
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["search", spec, "--out", str(out), "--jobs", "1", "-q"])
    assert res.exit_code == 0, res.output
    before = sorted(p.name for p in out.iterdir())
    res = CliRunner().invoke(main, ["search", spec, "--out", str(out), "--jobs", "1", "-q", "--results", str(out / "r.jsonl")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "results: " in res.stderr and "inside the output directory" in res.stderr
    assert sorted(p.name for p in out.iterdir()) == before  # nothing left behind
    res = CliRunner().invoke(main, ["search", spec, "--out", str(out), "--jobs", "1", "-q"])
    assert res.exit_code == 0, res.output  # a later run still works


def test_empty_objectives_is_an_error(tmp_path):
    data = {**SMALL, "search": {**SMALL["search"], "objectives": []}}
    res = CliRunner().invoke(main, ["search", write(tmp_path, data), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "search.objectives: objectives lists no objective" in res.stderr
    assert not (tmp_path / "o").exists()


def test_a_huge_space_is_refused_up_front(tmp_path):
    data = {**SMALL, "search": {**SMALL["search"], "space": {**SMALL["search"]["space"], "radix": list(range(2, 20_002, 2)), "planes": list(range(1, 10_001))}}}
    t0 = time.monotonic()
    res = CliRunner().invoke(main, ["search", write(tmp_path, data), "--out", str(tmp_path / "o")])
    took = time.monotonic() - t0
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "search.space: the space's axes multiply to" in res.stderr and "at most 1,000,000" in res.stderr
    assert took < 30, took  # refused by multiplying the axes, not by walking 10^8 designs
    assert not (tmp_path / "o").exists()
