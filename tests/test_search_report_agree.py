"""The report names the same design as the search, where both answer the same question.

The two answer different questions in general: ``topogen search`` ranks a space of designs by
an objective under constraints; the build's decision compares the two architectures of one
spec, recommending the cheaper unless its step time is more than ``decision.TOLERANCE``
slower. They ask the same question when the space varies only the architecture, the search
chooses by capex under ``max_iteration_s`` = the fastest design's iteration x (1 + TOLERANCE),
and the workload is dense (its step time is Eq. 1's iteration: no expert all-to-alls). Then
the decision of ``arch: both`` must recommend the architecture the search chose, and a build of
the search's ``chosen.yaml`` must price it at the search's own figures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topogen.analysis import decision
from topogen.cli import main

JOBS = [
    {"gpus": 512, "oversubscription": "1:1"},
    {"gpus": 2048, "oversubscription": "3:1"},
    {"gpus": 4096, "oversubscription": "1:1"},
    {"gpus": 4096, "oversubscription": "3:1"},
]
BASE = {"hb_domain": 8, "radix": 64, "link_speed": 400, "catalog": "ndr-400g", "workload": {"model": "gpt-3-175b", "gpu": "b200"}}


def _cli(args: list[str]):
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    return res


@pytest.mark.parametrize("job", JOBS, ids=lambda j: f"{j['gpus']}-{j['oversubscription']}")
def test_the_decision_recommends_the_search_s_choice(tmp_path, job):
    name = f"agree-{job['gpus']}"
    # the build of arch: both, and its decision
    spec = {"name": name, **BASE, "gpus": job["gpus"], "oversubscription": job["oversubscription"], "arch": "both"}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    _cli(["build", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "build")])
    d = json.loads((tmp_path / "build" / "summary.json").read_text())["decision"]
    fastest = min(side["step_s"] for side in d["architectures"].values())
    # the search over the architecture alone, the cheapest within the decision's tolerance of the fastest
    search = {"name": name, **BASE, "oversubscription": job["oversubscription"],
              "search": {"gpus": job["gpus"], "space": {"arch": ["rail-optimized", "rail-only"]}, "objectives": ["capex", "iteration"], "choose": "capex", "slack": 1.0,
                         "constraints": {"max_iteration_s": fastest * (1 + decision.TOLERANCE)}}}
    (tmp_path / "search.yaml").write_text(yaml.safe_dump(search, sort_keys=False))
    res = _cli(["search", str(tmp_path / "search.yaml"), "--out", str(tmp_path / "search"), "--jobs", "1", "--json"])
    chosen = json.loads(res.output)["chosen"]
    assert all(side["alltoall_step_s"] in (None, 0) for side in d["architectures"].values())  # dense: step time is the iteration
    assert d["recommended"] == chosen["arch"], (d["sentence"], chosen["label"] if "label" in chosen else chosen["design"])
    assert d["architectures"][chosen["arch"]]["capex_usd"] == chosen["cost_usd"]
    assert d["architectures"][chosen["arch"]]["iteration_s"] == chosen["iteration_s"]
    # the search's chosen.yaml, built: its decision names the same architecture at the same figures
    _cli(["build", str(tmp_path / "search" / "chosen.yaml"), "--out", str(tmp_path / "chosen")])
    c = json.loads((tmp_path / "chosen" / "summary.json").read_text())["decision"]
    assert c["recommended"] == chosen["arch"]
    assert c["architectures"][chosen["arch"]]["capex_usd"] == chosen["cost_usd"]
    assert c["architectures"][chosen["arch"]]["power_w"] == chosen["power_w"]
