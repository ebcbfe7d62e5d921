"""topogen search by target: max_iteration_s, the binding constraint, the NIC's speed and oversubscription in the iteration model.

Jobs of known answers: every design of a small space is built explicitly (slack 1), so the
cheapest design meeting a target can be read off the rows; the search must choose it, it must
meet every target, and the constraint it names as binding must be one the cheaper designs break.
"""

from __future__ import annotations

import pytest

from topogen.analysis.fabric import iteration_report, scale_out_at
from topogen.search import run, space
from topogen.spec.cluster import build_spec

from search_oracle import every_design

BASE = {
    "name": "target",
    "workload": {"model": "gpt-3-175b", "gpu": "b200"},
    "search": {
        "gpus": 2048,
        "space": {"arch": ["rail-optimized", "rail-only"], "hb_domain": [8, 64], "catalog": ["ndr-400g"], "radix": [64], "oversubscription": ["1:1", "3:1"]},
        "objectives": ["capex", "iteration"],
        "choose": "capex",
        "slack": 1.0,
    },
}


def _search(constraints: dict) -> run.Result:
    data = {**BASE, "search": {**BASE["search"], "constraints": constraints}}
    return run.search(space.parse(data, {}))


@pytest.fixture(scope="module")
def oracle():
    """Every design of the space built explicitly: (design, cost, iteration), the known answers."""
    out = [{"design": row["design"], "cost_usd": got["cost_usd"], "iteration_s": got["iteration_s"]} for row, got in every_design(BASE)]
    return out


def _iterations(oracle) -> list[float]:
    return sorted({r["iteration_s"] for r in oracle})


@pytest.mark.parametrize("pick", [0, 1, 2, 3])
def test_cheapest_design_under_an_iteration_target(oracle, pick):
    targets = _iterations(oracle)
    if pick >= len(targets):
        pytest.skip(f"the space has {len(targets)} iteration times")
    target = targets[pick] * 1.0001
    res = _search({"max_iteration_s": target})
    best = min((r for r in oracle if r["iteration_s"] <= target), key=lambda r: (r["cost_usd"], r["design"]))
    assert res.chosen["iteration_s"] <= target
    assert res.chosen["cost_usd"] == best["cost_usd"]
    if any(r["cost_usd"] < best["cost_usd"] for r in oracle):
        assert res.chosen["binding"]["constraint"] == "max_iteration_s"
        assert res.chosen["binding"]["value"] > target
    else:
        assert res.chosen["binding"] is None


def test_budget_and_iteration_together_name_what_binds(oracle):
    fastest = min(_iterations(oracle)) * 1.0001
    cheapest = min(r["cost_usd"] for r in oracle)
    best = min(r["cost_usd"] for r in oracle if r["iteration_s"] <= fastest)
    res = _search({"budget": best * 1.01, "max_iteration_s": fastest})
    assert res.chosen["iteration_s"] <= fastest and res.chosen["cost_usd"] == best
    assert (res.chosen["binding"] or {}).get("constraint") == ("max_iteration_s" if best > cheapest else None)
    from topogen.util.errors import InputError

    with pytest.raises(InputError) as exc:  # a budget under the fastest design's cost: nothing meets both
        _search({"budget": best * 0.99, "max_iteration_s": fastest})
    assert "search.constraints" in exc.value.problems[0].render()


def test_an_unmeetable_target_names_the_fastest_design(oracle):
    from topogen.util.errors import InputError

    with pytest.raises(InputError) as exc:
        _search({"max_iteration_s": min(_iterations(oracle)) / 2})
    text = exc.value.problems[0].render()
    assert "max_iteration_s" in text and "the fastest design is" in text


def test_ports_slower_than_the_nic_are_not_searched_unless_listed():
    data = {**BASE, "search": {**BASE["search"], "space": {k: v for k, v in BASE["search"]["space"].items()}}}
    pts, skipped = space.points(space.parse(data, {}), run.load_catalogs(space.parse(data, {})))
    assert pts and all(p["link_speed"] * p.get("planes", 1) >= 400 for p in pts)
    assert any("slower than the 400G NIC" in why for _l, why in skipped)
    data["search"]["space"]["link_speed"] = [200, 400]
    pts, _ = space.points(space.parse(data, {}), run.load_catalogs(space.parse(data, {})))
    assert {p["link_speed"] for p in pts} == {200, 400}


@pytest.mark.parametrize("ratio,tiers_expected_slower", [("1:1", False), ("3:1", True), ("7:1", True)])
@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
@pytest.mark.parametrize("gpus", [512, 4096])
def test_iteration_honours_oversubscription(ratio, tiers_expected_slower, arch, gpus):
    spec = build_spec({"gpus": gpus, "hb_domain": 8, "radix": 64, "link_speed": 400, "arch": arch, "oversubscription": ratio, "catalog": "ndr-400g", "workload": {"model": "gpt-3-175b", "gpu": "b200"}}, {})
    from topogen.spec.counts import arch_counts

    tiers = arch_counts(spec, arch).tiers
    d, u = (int(x) for x in ratio.split(":"))
    bs = scale_out_at(spec, arch).value
    assert bs == (400 / (d / u) if tiers > 1 else 400)
    row = iteration_report([spec]).rows[0]
    flat = iteration_report([build_spec({"gpus": gpus, "hb_domain": 8, "radix": 64, "link_speed": 400, "arch": arch, "catalog": "ndr-400g", "workload": {"model": "gpt-3-175b", "gpu": "b200"}}, {})]).rows[0]
    assert row["scale_out_gbps"] == bs
    if tiers > 1 and d > u:
        assert row["iteration_s"] > flat["iteration_s"]
        assert row["dp_network_s"] == pytest.approx(flat["dp_network_s"] * d / u)
    else:
        assert row["iteration_s"] == flat["iteration_s"]


def test_the_nic_caps_a_faster_port():
    spec = build_spec({"gpus": 1024, "hb_domain": 8, "radix": 64, "link_speed": 800, "arch": "rail-optimized", "catalog": "xdr-800g", "workload": {"model": "gpt-3-175b", "gpu": "b200"}}, {})
    p = scale_out_at(spec, "rail-optimized")
    assert p.value == 400 and "NIC" in p.source


def _text_blocks(page: str) -> list[list[str]]:
    """The ```text blocks of a docs page."""
    out, cur = [], None
    for line in page.splitlines():
        if cur is None and line.strip() == "```text":
            cur = []
        elif cur is not None and line.strip() == "```":
            out.append(cur)
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


@pytest.mark.parametrize("flags,block", [(["--max-iteration-s", "1.5"], 0), (["--budget", "1000"], 1)])
def test_docs_search_page_shows_what_the_tool_prints(tmp_path, flags, block):
    """docs/search.md's printed answers (the binding constraint, the error of a budget nothing meets) are the bundled search's own output."""
    from pathlib import Path

    from click.testing import CliRunner

    from topogen.cli import main

    page = (Path(__file__).resolve().parents[1] / "docs" / "search.md").read_text(encoding="utf-8")
    want = _text_blocks(page)[block]
    res = CliRunner().invoke(main, ["search", "b200-32k", "--out", str(tmp_path / "s"), "--jobs", "1", *flags])
    got = res.output.splitlines()
    for line in want:
        assert line in got, f"docs/search.md shows {line!r}; the tool prints:\n{res.output}"
