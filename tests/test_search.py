"""topogen search: the space, the closed-form screening, the explicit front, the chosen spec, bad input.

The bundled search (b200-32k: 32,768 GPUs and up, two catalogs, both
architectures, 1:1 and 3:1, K = 8 and 72) runs once per module; `topogen build`
of its chosen spec, and a build of every front design, must give the front's
figures exactly.
"""

from __future__ import annotations

import json
import os
import random
from itertools import product
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topogen import pipeline
from topogen.cli import main
from topogen.search import front, run, screen, space
from topogen.search.explicit import build_design, figures
from topogen.search.journal import HEADER
from topogen.spec.cluster import build_spec, load_spec

SMALL = {
    "name": "small",
    "workload": {"model": "gpt-3-175b", "gpu": "b200"},
    "search": {
        "gpus": 4096,
        "space": {"arch": ["rail-optimized", "rail-only"], "hb_domain": [8, 64], "catalog": ["ndr-400g"], "radix": [64], "link_speed": [400], "oversubscription": ["1:1", "3:1"]},
        "objectives": ["capex", "power", "iteration", "blast_radius"],
    },
}


def invoke(args: list[str]):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def write(tmp_path: Path, data: dict, name: str = "s.yaml") -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(p)


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    out = tmp_path_factory.mktemp("search") / "b200"
    res = invoke(["search", "b200-32k", "--out", str(out), "--jobs", "1", "--json"])
    assert res.exit_code == 0, res.output
    return out, json.loads(res.output)


def test_bundled_search_front_and_files(bundled):
    out, got = bundled
    assert set(got) >= {"rows", "front", "chosen"}
    assert sorted(p.name for p in out.iterdir()) == ["chosen.yaml", "designs.csv", "front.csv", "manifest.json", "pareto.png", "pareto.svg", "search.json"]
    assert json.loads((out / "search.json").read_text()) == got
    rows = got["rows"]
    # arch x K x ratio x the catalogs' (speed, radix) port modes at the B200's 400G NIC or faster: ndr-400g 1, xdr-800g 3
    assert len(rows) == 2 * 2 * 2 * (1 + 3)
    assert all(r["link_speed"] >= 400 for r in rows)
    assert any("slower than the 400G NIC" in x["reason"] for x in got["skipped"])
    assert {r["arch"] for r in got["front"]} <= {"rail-optimized", "rail-only"}
    assert {(r["hb_domain"], r["gpus"]) for r in rows} == {(8, 32768), (72, 32832)}  # at least 32,768, whole HB domains
    front_names = [r["design"] for r in got["front"]]
    assert got["chosen"]["design"] == front_names[0]
    assert got["chosen"]["cost_per_gpu"] == min(r["cost_per_gpu"] for r in got["front"])
    assert all(r["figures"] == "explicit" for r in got["front"])
    # the front is the non-dominated set of the designs built, on the objectives
    built = [r for r in rows if r.get("figures") == "explicit"]
    keys = [space.OBJECTIVES[o].key for o in got["search"]["objectives"]]
    vec = [[r[k] for k in keys] for r in built]
    assert sorted(front_names) == sorted(built[i]["design"] for i in front.non_dominated(vec))
    # every family is on the front or names the front design that beats it
    assert len(got["families"]) == 8
    for f in got["families"]:
        assert f["on_front"] or f["beaten_by"] in front_names, f
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["chosen"]["spec_sha256"] == got["chosen"]["spec_sha256"]
    assert {f["path"] for f in manifest["files"]} == {"chosen.yaml", "designs.csv", "front.csv", "pareto.png", "pareto.svg", "search.json"}


def test_build_of_the_chosen_spec_reproduces_the_front_figures(bundled, tmp_path):
    out, got = bundled
    res = invoke(["build", str(out / "chosen.yaml"), "--out", str(tmp_path / "b"), "--formats", "bom", "-q"])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    c = got["chosen"]
    assert summary["spec_sha256"] == c["spec_sha256"]
    mine = figures(summary, c["arch"])
    for key in ("cost_usd", "cost_per_gpu", "power_w", "cables_optics", "transceivers", "cables", "iteration_s", "blast_radius_gpus", "switch_hops", "racks", "switches_per_tier", "links_per_tier"):
        assert mine[key] == c[key], key
    assert summary["architectures"][c["arch"]]["cost"] == c["cost_usd"]


def test_every_front_design_rebuilds_to_its_figures(bundled):
    _out, got = bundled
    for r in got["front"]:
        spec = build_spec(r["spec"], default_name=r["design"])
        assert spec.digest() == r["spec_sha256"]
        mine = figures(pipeline.build(spec).summary, spec.arch)
        assert {k: mine[k] for k in screen_keys()} == {k: r[k] for k in screen_keys()}


def screen_keys() -> tuple[str, ...]:
    return ("tiers", "switches_per_tier", "links_per_tier", "cost_usd", "cost_per_gpu", "power_w", "cables_optics", "iteration_s", "blast_radius_gpus", "switch_hops", "racks")


def test_search_is_deterministic_and_the_same_with_worker_processes(bundled, tmp_path):
    out, got = bundled
    res = invoke(["search", "b200-32k", "--out", str(tmp_path / "again"), "--jobs", "2", "-q"])
    assert res.exit_code == 0, res.output
    again = json.loads((tmp_path / "again" / "search.json").read_text())
    assert again["front"] == got["front"] and again["chosen"] == got["chosen"] and again["rows"] == got["rows"]
    for name in ("front.csv", "designs.csv", "chosen.yaml", "pareto.png", "pareto.svg"):
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes(), name


def test_table_names_the_chosen_design_and_every_family(tmp_path):
    res = invoke(["search", write(tmp_path, SMALL), "--out", str(tmp_path / "o"), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    got = json.loads((tmp_path / "o" / "search.json").read_text())
    assert f"chosen: {got['chosen']['design']}" in res.output
    for f in got["families"]:
        assert f"  {f['family']}: " in res.output
    assert "Pareto front of capex, power, iteration, blast_radius" in res.output


# --- screening against the explicit wiring ---------------------------------------------


@pytest.mark.parametrize("arch,k,radix,ratio,n", [(a, k, r, o, n) for a, k, r, o, n in product(("rail-optimized", "rail-only"), (8, 72), (64, 144), ("1:1", "3:1"), (4608, 36864))])
def test_closed_form_counts_equal_the_wiring_and_iteration_equals_the_build(arch, k, radix, ratio, n):
    """Over a grid of N, K, radix and ratio: the screened tiers, switches and links per tier are the wiring's; iteration is the build's."""
    s = space.parse({"workload": {"model": "gpt-3-175b", "gpu": "b200"}, "search": {"gpus": n, "space": {"arch": [arch], "hb_domain": [k], "catalog": ["xdr-800g"], "radix": [radix], "link_speed": [800], "oversubscription": [ratio]}}}, {})
    cats = run.load_catalogs(s)
    (o,), _ = space.points(s, cats)
    sc = screen.Screener(s, cats)
    row = sc.screen(0, o)
    assert "skipped" not in row, row
    sc.materialize(row)
    got = build_design(row["spec"])
    assert got["spec_sha256"] == row["spec_sha256"]
    for key in ("tiers", "switches_per_tier", "links_per_tier", "iteration_s"):
        assert got[key] == row[key], key
    assert got["closed_form_agrees"] and got["valid"]
    assert row["switch_hops"] == got["switch_hops"]


def test_a_disagreement_between_closed_form_and_wiring_is_an_error(tmp_path, monkeypatch):
    real = screen.estimate

    def off_by_one(*args):
        out = real(*args)
        out["switches_per_tier"] = [out["switches_per_tier"][0] + 1, *out["switches_per_tier"][1:]]
        return out

    monkeypatch.setattr(screen, "estimate", off_by_one)
    res = CliRunner().invoke(main, ["search", write(tmp_path, SMALL), "--out", str(tmp_path / "o"), "--jobs", "1"])
    assert res.exit_code == 1
    assert "closed form and wiring disagree on switches_per_tier" in res.output
    got = json.loads((tmp_path / "o" / "search.json").read_text())
    assert got["errors"] and got["front"] == [] and got["chosen"] == {}
    assert not (tmp_path / "o" / "chosen.yaml").exists()


# --- the Pareto front ----------------------------------------------------------------------


def brute_front(v):
    return [i for i, p in enumerate(v) if not any(front.dominates(q, p) for q in v)]


@pytest.mark.parametrize("n,m,levels", [(1, 1, 3), (30, 2, 4), (200, 3, 5), (400, 4, 3), (300, 5, 1000)])
def test_non_dominated_equals_brute_force(n, m, levels):
    rnd = random.Random(n * 31 + m)
    v = [[rnd.randrange(levels) for _ in range(m)] for _ in range(n)]
    assert front.non_dominated(v) == brute_front(v)


@pytest.mark.parametrize("eps", [0.0, 0.05, 0.3])
def test_near_front_keeps_the_front_and_only_points_within_the_slack(eps):
    rnd = random.Random(7)
    v = [[rnd.uniform(1, 2) for _ in range(3)] for _ in range(300)]
    near = front.near_front(v, [eps] * 3)
    assert set(front.non_dominated(v)) <= set(near)
    for i in range(len(v)):
        beaten = any(front.dominates([x * (1 + eps) for x in q], v[i]) for q in v)
        assert (i in near) == (not beaten)


# --- bad input: exit 2, what would be valid, nothing written ------------------------------


def bad(tmp_path, data, *flags):
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["search", write(tmp_path, data), "--out", str(out), "--jobs", "1", *flags])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert not out.exists()
    return res.output


def test_unknown_objective_lists_the_valid_ones(tmp_path):
    msg = bad(tmp_path, {**SMALL, "search": {**SMALL["search"], "objectives": ["capex", "latency"]}})
    assert "search.objectives: unknown objective(s) 'latency'" in msg
    assert "valid objectives: capex, cost_per_gpu, power, iteration, blast_radius, cables_optics" in msg


def test_empty_space(tmp_path):
    msg = bad(tmp_path, {**SMALL, "search": {**SMALL["search"], "space": {**SMALL["search"]["space"], "hb_domain": []}}})
    assert "search.space.hb_domain: hb_domain lists no value: the space is empty" in msg
    msg = bad(tmp_path, {**SMALL, "search": {**SMALL["search"], "gpus": 4100}})
    assert "the space holds no design" in msg and "4,100 GPUs are no whole number of HB domains of 8" in msg and "at_least" in msg


def test_a_space_nothing_in_can_be_built_says_why(tmp_path):
    msg = bad(tmp_path, {**SMALL, "search": {**SMALL["search"], "space": {**SMALL["search"]["space"], "radix": [48]}}})
    assert "none of the 8 designs of the space can be built" in msg and "no 400G switch with radix 48" in msg


def test_nothing_meets_the_budget_names_the_cheapest_design_and_its_cost(tmp_path):
    msg = bad(tmp_path, SMALL, "--budget", "1000")
    assert "search.constraints.budget: nothing meets the budget of $1,000: the cheapest design is small-" in msg
    name = msg.split("the cheapest design is ")[1].split(" ")[0]
    cost = msg.split(") at $")[1].split(";")[0]
    s = space.parse(SMALL, {})
    cats = run.load_catalogs(s)
    overrides, _ = space.points(s, cats)
    sc = screen.Screener(s, cats)
    rows = [sc.screen(i, o) for i, o in enumerate(overrides)]
    for r in rows:
        if "skipped" not in r:
            sc.materialize(r)
    exact = {r["design"]: build_design(r["spec"])["cost_usd"] for r in rows if "skipped" not in r}
    assert name == min(exact, key=lambda d: (exact[d], d))
    assert cost == f"{round(exact[name]):,}"
    assert "raise budget to at least" in msg


def test_power_cap_and_racks_nothing_meets(tmp_path):
    assert "nothing meets the power cap of 1 kW: the lowest-power design is" in bad(tmp_path, SMALL, "--power-kw", "1")
    assert "nothing meets the rack cap of 3 racks: the smallest design is" in bad(tmp_path, SMALL, "--racks", "3")


def test_unknown_keys_axes_and_constraints(tmp_path):
    msg = bad(tmp_path, {**SMALL, "search": {**SMALL["search"], "space": {"archs": ["rail-only"]}, "constraints": {"budgets": 5}, "choose": "speed"}})
    assert "search.space.archs: unknown axis 'archs'" in msg
    assert "search.constraints.budgets: unknown constraint 'budgets'; valid constraints: budget, power_kw, racks, max_hops" in msg
    assert "search.choose: unknown objective 'speed'" in msg
    msg = bad(tmp_path, {k: v for k, v in SMALL.items() if k != "search"})
    assert "the file has no search: section" in msg


def test_constraints_hold_on_the_front(tmp_path):
    res = invoke(["search", write(tmp_path, SMALL), "--out", str(tmp_path / "o"), "--jobs", "1", "--json"])
    base = json.loads(res.output)
    cap = sorted(r["cost_usd"] for r in base["front"])[len(base["front"]) // 2]
    res = invoke(["search", write(tmp_path, SMALL), "--out", str(tmp_path / "o2"), "--jobs", "1", "--json", "--budget", str(cap), "--max-hops", "3"])
    got = json.loads(res.output)
    assert got["front"] and all(r["cost_usd"] <= cap and r["switch_hops"] <= 3 for r in got["front"])


# --- resume from the results file ------------------------------------------------------


def test_resume_reuses_the_results_file(tmp_path):
    spec = write(tmp_path, SMALL)
    journal = tmp_path / "results.jsonl"
    first = json.loads(invoke(["search", spec, "--out", str(tmp_path / "a"), "--jobs", "1", "--json", "--results", str(journal)]).output)
    lines = journal.read_text().splitlines()
    assert json.loads(lines[0]) == HEADER and len(lines) == 1 + first["stats"]["built"]
    with open(journal, "a") as fh:
        fh.write('{"spec_sha256": "cut by a cra')  # a crash mid-line
    second = json.loads(invoke(["search", spec, "--out", str(tmp_path / "b"), "--jobs", "1", "--json", "--results", str(journal)]).output)
    assert second["stats"]["built"] == 0 and second["stats"]["reused"] == first["stats"]["built"]
    assert second["front"] == first["front"] and second["chosen"] == first["chosen"]


def test_a_file_that_is_no_results_file_is_refused(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("my notes\n")
    msg = bad(tmp_path, SMALL, "--results", str(other))
    assert "is not a topogen search results file" in msg
    assert other.read_text() == "my notes\n"


def test_gpu_presets_scale_up_gives_the_hb_domains(tmp_path):
    data = {**SMALL, "search": {**SMALL["search"], "gpus": {"at_least": 30000}, "space": {k: v for k, v in SMALL["search"]["space"].items() if k != "hb_domain"}}}
    s = space.parse(data, {})
    assert s.axes["hb_domain"] == (8, 72) and s.scale_up == {8: 8, 72: 4}
    overrides, _ = space.points(s, run.load_catalogs(s))
    assert {(o["hb_domain"], o["gpus"], o.get("gpus_per_node")) for o in overrides} == {(8, 30000, 8), (72, 30024, 4)}
    assert load_spec("gb200-nvl72").gpus_per_node == 4  # presets with scale_up still load


# --- local workers: a worker that dies is replaced and its builds run again -------------------

MARK = Path(os.environ.get("TMPDIR", "/tmp")) / f"topogen-search-test-{os.getpid()}"


def dies_once(spec: dict) -> dict:
    """A build that takes its worker process down the first time (the marker file says it did)."""
    try:
        fd = os.open(MARK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return {"name": spec["name"], "pid": os.getpid()}
    os.close(fd)
    os._exit(9)


def test_a_local_worker_that_dies_is_retried():
    from topogen.search.executor import Local

    MARK.unlink(missing_ok=True)
    try:
        specs = [{"name": f"d{i}"} for i in range(6)]
        got = dict(Local(2, fn=dies_once).run(specs))
        assert MARK.exists()  # one worker did die
        assert sorted(got) == list(range(6)) and [got[i]["name"] for i in range(6)] == [s["name"] for s in specs]
    finally:
        MARK.unlink(missing_ok=True)


def test_axis_values_and_the_name_are_checked(tmp_path):
    data = {**SMALL, "name": "a b", "search": {**SMALL["search"], "space": {**SMALL["search"]["space"], "hb_domain": [8, "x"], "planes": [0]}}}
    msg = bad(tmp_path, data)
    assert "search.space.hb_domain: hb_domain values must be positive whole numbers, got 'x'" in msg
    assert "search.space.planes: planes values must be positive whole numbers, got 0" in msg
    assert "name: name 'a b' is not a safe directory name" in msg


def test_the_base_specs_radix_is_the_axis_when_the_space_lists_none():
    data = {"name": "r", "radix": [32, 288], "link_speed": 400, "search": {"gpus": 4096, "space": {"arch": ["rail-optimized"], "hb_domain": [8], "catalog": ["chassis-400g"]}, "objectives": ["capex", "power"]}}
    s = space.parse(data, {})
    overrides, _ = space.points(s, run.load_catalogs(s))
    assert [(o["radix"], o["link_speed"]) for o in overrides] == [("32/288", 400)]


def test_a_search_without_workload_ranks_cost_and_power_and_draws_no_plot(tmp_path):
    data = {"name": "nowl", "search": {"gpus": 2048, "space": {"hb_domain": [8], "catalog": ["ndr-400g"], "radix": [64], "link_speed": [400], "oversubscription": ["1:1", "3:1"]}, "objectives": ["capex", "power", "cables_optics"]}}
    res = invoke(["search", write(tmp_path, data), "--out", str(tmp_path / "o"), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    assert "note: pareto.png not drawn: the search has no workload" in res.output
    assert not (tmp_path / "o" / "pareto.png").exists() and (tmp_path / "o" / "chosen.yaml").exists()
    (tmp_path / "again").mkdir()
    msg = bad(tmp_path / "again", {**data, "search": {**data["search"], "objectives": ["iteration"]}})
    assert "workload: objective iteration needs a workload" in msg


def test_a_results_file_in_a_missing_directory_is_refused_before_any_build(tmp_path):
    msg = bad(tmp_path, SMALL, "--results", str(tmp_path / "nowhere" / "r.jsonl"))
    assert "results: " in msg and "cannot be created" in msg and "is not a writable directory" in msg


@pytest.mark.parametrize("shared", [False, True])
def test_rail_optimized_leaves_equal_the_group_by_group_runs(shared):
    """The one-run-per-kind-of-group path of counts.rail_optimized_leaves gives the runs of the loop over every group."""
    from topogen.spec import counts
    from topogen.spec.counts import LeafRun, Units

    def by_group(domains, hb, radix, units):
        runs = []
        for d, rho, _n in counts.rail_optimized_groups(domains, hb, radix, shared, None, units):
            if hb // rho:
                runs.append(LeafRun(hb // rho, rho, d))
            if hb % rho:
                runs.append(LeafRun(1, hb % rho, d))
        return counts._merge_runs(runs)

    cases = 0
    for domains, hb, radix in product([1, 2, 3, 5, 7, 16, 31, 33, 100, 4095], [1, 3, 8, 36, 72, 256], [4, 16, 64, 128]):
        for units in (counts.NO_UNITS, Units(2, 0, 0, False), Units(3, 0, 1, False), Units(0, 0, 1, False)):
            if units.domains > radix // 2 or units.reserved >= radix // 2:
                continue
            assert counts.rail_optimized_leaves(domains, hb, radix, shared, units=units) == by_group(domains, hb, radix, units)
            cases += 1
    assert cases > 800
