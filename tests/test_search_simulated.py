"""topogen search with targets on simulated performance: min_bus_bandwidth_GBps and min_alltoall_GBps.

Jobs of known answers: every design of a small space (both architectures, one and two planes, 400G
and 400G, 1:1 and 3:1) is built and simulated here, design by design; the search must choose
the cheapest design meeting every target, that design must meet them, and the constraint it
names as binding must be one the cheaper designs break by their simulated figures.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topogen import pipeline
from topogen.cli import main
from topogen.search import run, simulated, space
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError

from search_oracle import every_design

BASE = {
    "name": "simt",
    "workload": {"model": "deepseek-v3", "gpu": "b200", "parallelism": {"expert_parallel": 256}},
    "search": {
        "gpus": 2048,
        "space": {"arch": ["rail-optimized", "rail-only"], "hb_domain": [8], "catalog": ["ndr-400g"], "radix": [64], "planes": [1, 2], "oversubscription": ["1:1", "3:1"]},
        "objectives": ["capex"],
        "slack": 1.0,
    },
}
SIM = ("bus_bandwidth_GBps", "alltoall_GBps")


def _search(constraints: dict) -> run.Result:
    return run.search(space.parse({**BASE, "search": {**BASE["search"], "constraints": constraints}}, {}))


@pytest.fixture(scope="module")
def oracle():
    """Every design of the space built and simulated on its own: design, cost, and the two simulated figures."""
    out = [{"design": row["design"], "cost_usd": got["cost_usd"], **simulated.simulate_design(row["spec"], SIM)} for row, got in every_design(BASE)]
    assert len(out) >= 8
    return out


def _values(oracle, key: str) -> list[float]:
    return sorted({r[key] for r in oracle})


def _cheapest(oracle, ok) -> dict:
    return min((r for r in oracle if ok(r)), key=lambda r: (r["cost_usd"], r["design"]))


def test_the_space_has_targets_that_bind(oracle):
    """The space is one where the simulated figures differ (else the tests below would prove nothing)."""
    assert len(_values(oracle, "bus_bandwidth_GBps")) >= 2
    assert len(_values(oracle, "alltoall_GBps")) >= 2
    cheapest = min(r["cost_usd"] for r in oracle)
    assert any(r["cost_usd"] == cheapest and r["bus_bandwidth_GBps"] < max(_values(oracle, "bus_bandwidth_GBps")) for r in oracle)


@pytest.mark.parametrize("name,key", [("min_bus_bandwidth_GBps", "bus_bandwidth_GBps"), ("min_alltoall_GBps", "alltoall_GBps")])
@pytest.mark.parametrize("pick", [0, 1, 2, 3])
def test_cheapest_design_meeting_a_simulated_target(oracle, name, key, pick):
    targets = _values(oracle, key)
    if pick >= len(targets):
        pytest.skip(f"the space has {len(targets)} values of {key}")
    target = targets[pick] * 0.9999
    res = _search({name: target})
    best = _cheapest(oracle, lambda r: r[key] >= target)
    assert res.chosen[key] >= target
    assert res.chosen["cost_usd"] == best["cost_usd"]
    mine = next(r for r in oracle if r["design"] == res.chosen["design"])
    assert res.chosen[key] == mine[key]  # the search's figure is the design's own simulation
    if any(r["cost_usd"] < best["cost_usd"] for r in oracle):
        b = res.chosen["binding"]
        assert b["constraint"] == name and b["value"] < target
        assert next(r for r in oracle if r["design"] == b["design"])[key] == b["value"]
    else:
        assert res.chosen["binding"] is None


def test_both_simulated_targets_and_a_budget_together(oracle):
    bus = max(_values(oracle, "bus_bandwidth_GBps")) * 0.9999
    a2a = max(_values(oracle, "alltoall_GBps")) * 0.9999
    best = _cheapest(oracle, lambda r: r["bus_bandwidth_GBps"] >= bus and r["alltoall_GBps"] >= a2a)
    res = _search({"min_bus_bandwidth_GBps": bus, "min_alltoall_GBps": a2a, "budget": best["cost_usd"] * 1.01})
    assert res.chosen["cost_usd"] == best["cost_usd"]
    assert res.chosen["bus_bandwidth_GBps"] >= bus and res.chosen["alltoall_GBps"] >= a2a and res.chosen["cost_usd"] <= best["cost_usd"] * 1.01
    with pytest.raises(InputError) as exc:  # a budget under the only designs that meet both: nothing meets all at once
        _search({"min_bus_bandwidth_GBps": bus, "min_alltoall_GBps": a2a, "budget": best["cost_usd"] * 0.99})
    assert "search.constraints" in exc.value.problems[0].render()


def test_only_designs_meeting_the_cheap_constraints_are_simulated(oracle, monkeypatch):
    """A simulation costs far more than a closed form: designs over the budget by their explicit figures are never simulated."""
    seen: list[str] = []
    real = run.simulate_design

    def spy(spec, wanted):
        seen.append(spec["name"])
        return real(spec, wanted)

    monkeypatch.setattr(run, "simulate_design", spy)
    costs = sorted({r["cost_usd"] for r in oracle})
    budget = costs[len(costs) // 2]
    res = _search({"budget": budget, "min_bus_bandwidth_GBps": 1})
    cost = {r["design"]: r["cost_usd"] for r in oracle}
    assert seen and len(seen) == len(set(seen))
    assert all(cost[d] <= budget for d in seen), seen
    assert res.stats["simulated"] == len(seen) < len(oracle)


def test_an_unmeetable_simulated_target_names_the_fastest_design(oracle):
    top = max(_values(oracle, "bus_bandwidth_GBps"))
    with pytest.raises(InputError) as exc:
        _search({"min_bus_bandwidth_GBps": top * 2})
    text = exc.value.problems[0].render()
    assert text.startswith(f"search.constraints.min_bus_bandwidth_GBps: nothing meets the DP ring bus bandwidth target of {top * 2:g} GB/s: the fastest-ring design is")
    assert f"at {top:,.2f} GB/s (of the designs simulated: those that met every other constraint)" in text
    assert f"lower min_bus_bandwidth_GBps to at most {top:,.2f} GB/s" in text


def test_the_search_figures_are_build_traffic_figures(oracle):
    """One job, one figure: the chosen design's simulated figures are the rows topogen build --traffic shows for its spec."""
    a2a = _values(oracle, "alltoall_GBps")
    res = _search({"min_alltoall_GBps": a2a[1] * 0.9999, "min_bus_bandwidth_GBps": 1})
    spec = build_spec(dict(res.chosen["spec"]), default_name="chosen")
    rows = pipeline.build(spec, traffic=True).traffic["rows"]
    ring = next(r for r in rows if r["pattern"] == "ring-allreduce" and r["failed"] == "none")
    alltoall = next(r for r in rows if r["pattern"].startswith("alltoall") and r["failed"] == "none")
    assert ring["bus_bandwidth_GBps"] == res.chosen["bus_bandwidth_GBps"]
    assert alltoall["pattern"] == res.chosen["alltoall_pattern"] == "alltoall:256"
    assert round(alltoall["min_rate_fraction"] * spec.link_speed * spec.nic_ports / 8, 6) == pytest.approx(res.chosen["alltoall_GBps"], abs=1e-5)


def test_cli_flags_print_the_simulated_figures_and_write_them(tmp_path, oracle):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(BASE, sort_keys=False))
    bus = max(_values(oracle, "bus_bandwidth_GBps"))
    res = CliRunner().invoke(main, ["search", str(p), "--out", str(tmp_path / "o"), "--jobs", "1", "--min-bus-bandwidth-GBps", f"{bus * 0.9999}"])
    assert res.exit_code == 0, res.output
    assert f"simulated on its wiring: DP ring bus bandwidth {bus:,.2f} GB/s" in res.output
    head = (tmp_path / "o" / "designs.csv").read_text().splitlines()[0].split(",")
    assert "bus_bandwidth_GBps" in head and "alltoall_GBps" not in head


# --- bad input: exit 2, the field named, nothing written -----------------------------------


def _bad(tmp_path: Path, data: dict, *flags: str) -> str:
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["search", str(p), "--out", str(out), "--jobs", "1", *flags])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and not out.exists()
    return res.output


def test_a_simulated_target_must_be_a_positive_number(tmp_path):
    msg = _bad(tmp_path, BASE, "--min-alltoall-GBps", "-3")
    assert "search.constraints.min_alltoall_GBps: min_alltoall_GBps must be a positive number of GB/s, got '-3'" in msg


def test_an_alltoall_target_needs_the_hb_bandwidth(tmp_path):
    data = {k: v for k, v in BASE.items() if k != "workload"}
    data["search"] = {**BASE["search"], "space": {**BASE["search"]["space"], "hb_domain": [8]}, "constraints": {"min_alltoall_GBps": 10}}
    msg = _bad(tmp_path, data)
    assert ("search.constraints.min_alltoall_GBps: min_alltoall_GBps needs the HB-domain bandwidth the all-to-all relays over (and its EP group); "
            "add workload: {model: deepseek-v3, gpu: b200} (its expert parallelism sets the group), or hb_bandwidth_gbps, or drop min_alltoall_GBps") in msg
