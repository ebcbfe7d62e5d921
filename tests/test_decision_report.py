"""The decision: summary.json's decision, report.html in a real browser, topogen report, and the rule over a grid of jobs.

The page is rendered by headless Chromium (a screenshot, and a PDF printed with
--print-to-pdf whose pages pdfinfo and pdftotext read back); every figure cell of
the page carries its key and raw value, compared with summary.json's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topogen import pipeline
from topogen.analysis import decision
from topogen.cli import main
from topogen.exports.report import html as report_html
from topogen.spec.cluster import build_spec

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PDF_TOOLS = shutil.which("pdftotext") and shutil.which("pdfinfo")
MOE = {"name": "decide-moe", "gpus": 512, "hb_domain": 8, "radix": 64, "link_speed": 400, "catalog": "ndr-400g",
       "workload": {"model": "deepseek-v3", "gpu": "h100", "parallelism": {"expert_parallel": 64}}}


class Cells(HTMLParser):
    """Every element with data-key: (key, raw value, text)."""

    def __init__(self):
        super().__init__()
        self.cells: list[list] = []
        self._open: list | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-key" in a:
            self._open = [a["data-key"], a.get("data-value"), ""]
            self.cells.append(self._open)

    def handle_data(self, data):
        if self._open is not None:
            self._open[2] += data

    def handle_endtag(self, tag):
        self._open = None


def _at(doc, path: str):
    for part in path.split("."):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("decide") / "b"
    spec_path = out.parent / "moe.yaml"
    spec_path.write_text(yaml.safe_dump(MOE))
    res = CliRunner().invoke(main, ["build", str(spec_path), "--out", str(out), "--traffic"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out, json.loads((out / "summary.json").read_text())


def test_every_figure_on_the_page_is_summary_json_s(built):
    out, summary = built
    page = (out / "report.html").read_text()
    assert page == report_html.render(summary)
    p = Cells()
    p.feed(page)
    assert len(p.cells) > 40
    for key, raw, text in p.cells:
        want = _at(summary, key)
        if raw is None:
            assert text == want
        else:
            assert raw == ("" if want is None else repr(want) if isinstance(want, float) else str(want)), key
    d = summary["decision"]
    assert d["architectures"]["rail-only"]["capex_usd"] == summary["architectures"]["rail-only"]["cost"]
    assert {c["pattern"] for c in d["architectures"]["rail-only"]["collectives"]} == {"ring-allreduce", "alltoall:64", "permutation"}  # the EP group's all-to-all
    assert any(c["failed"] != "none" for c in d["architectures"]["rail-optimized"]["collectives"])  # a spine down
    assert "http" not in re.sub(r'xmlns="http://www.w3.org/2000/svg"', "", page)  # self-contained: no external assets


def test_topogen_report_rewrites_the_same_page(built, tmp_path):
    out, summary = built
    res = CliRunner().invoke(main, ["report", str(out), "--out", str(tmp_path / "r")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert summary["decision"]["sentence"] in res.output
    assert (tmp_path / "r" / "report.html").read_text() == (out / "report.html").read_text()
    again = CliRunner().invoke(main, ["report", str(out), "--out", str(tmp_path / "r")], catch_exceptions=False)
    assert again.exit_code == 0  # its own output is replaced


@pytest.mark.parametrize("case", ["missing", "not-json", "not-a-build"])
def test_topogen_report_bad_build_dir(tmp_path, case):
    d = tmp_path / "b"
    d.mkdir()
    if case == "not-json":
        (d / "summary.json").write_text("{")
    elif case == "not-a-build":
        (d / "summary.json").write_text("[1, 2]")
    res = CliRunner().invoke(main, ["report", str(d if case != "missing" else tmp_path / "nope"), "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and "BUILD_DIR" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "r").exists()


def _chromium(args: list[str], profile: Path) -> None:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}"]
    subprocess.run([CHROMIUM, *flags, *args], check=True, capture_output=True, timeout=120)


@pytest.mark.skipif(CHROMIUM is None or not PDF_TOOLS, reason="chromium and poppler-utils are not installed (apt-get install chromium poppler-utils; .ci/run does)")
def test_the_page_in_a_real_browser(built, tmp_path):
    out, summary = built
    page = (out / "report.html").resolve()
    shot, pdf = tmp_path / "report.png", tmp_path / "report.pdf"
    _chromium([f"--screenshot={shot}", "--window-size=1100,1500", page.as_uri()], tmp_path / "profile-decide-1")
    assert shot.stat().st_size > 20_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _chromium([f"--print-to-pdf={pdf}", "--no-pdf-header-footer", page.as_uri()], tmp_path / "profile-decide-2")
    info = subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True, text=True).stdout
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    assert 1 <= pages <= 4
    assert "(A4)" in re.search(r"Page size:.*", info).group(0)  # @page size
    text = " ".join(subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True).stdout.split())
    d = summary["decision"]
    assert " ".join(d["sentence"].split()) in text
    p = Cells()
    p.feed(page.read_text())
    for key, raw, shown in p.cells:  # every figure printed, as the page shows it
        if raw is not None:
            assert shown in text, (key, shown)


def _side(capex, iteration, a2a):
    return {"capex_usd": capex, "iteration_s": iteration, "alltoall_step_s": a2a, "step_s": iteration + a2a}


@pytest.mark.parametrize("ro_capex", [50.0, 100.0, 150.0])
@pytest.mark.parametrize("ro_slower", [0.0, 0.005, 0.02, 0.3])
@pytest.mark.parametrize("a2a_share", [0.0, 0.2])
def test_rail_only_is_recommended_exactly_where_its_figures_win(ro_capex, ro_slower, a2a_share):
    rx = _side(100.0, 10.0 * (1 - a2a_share), 10.0 * a2a_share)
    ro = _side(ro_capex, 10.0 * (1 - a2a_share), 10.0 * a2a_share + 10.0 * ro_slower)
    a2a = {"group_gpus": 64, "overhead_pipelined": ro_slower / a2a_share if a2a_share else 0.0, "hb_ratio_needed": 1.0, "hb_ratio": 18.0} if a2a_share else None
    got = decision.recommend({"rail-optimized": rx, "rail-only": ro}, a2a)
    cheaper, faster_or_equal = ro_capex < 100.0, ro["step_s"] <= rx["step_s"] * (1 + decision.TOLERANCE)  # a tie counts rail-optimized cheaper
    rx_within = rx["step_s"] <= ro["step_s"] * (1 + decision.TOLERANCE)
    want = "rail-only" if (cheaper and faster_or_equal) or (not cheaper and not rx_within) else "rail-optimized"
    assert got["recommended"] == want
    assert got["recommended"] in got["sentence"]
    if cheaper and a2a and a2a["overhead_pipelined"] > 0:  # the threshold it states is where the rule flips
        x = decision.TOLERANCE / a2a["overhead_pipelined"]
        assert f"{100 * x:.1f} %" in got["other_wins_when"]
        assert (a2a_share <= x + 1e-12) == (got["recommended"] == "rail-only")


@pytest.mark.parametrize("job", [
    {"gpus": 256, "oversubscription": "1:1", "model": "gpt-3-175b", "ep": None},
    {"gpus": 1024, "oversubscription": "3:1", "model": "gpt-3-175b", "ep": None},
    {"gpus": 512, "oversubscription": "1:1", "model": "deepseek-v3", "ep": 64},
    {"gpus": 1024, "oversubscription": "3:1", "model": "deepseek-v3", "ep": 256},
])
def test_the_build_s_decision_follows_its_own_figures(job):
    wl = {"model": job["model"], "gpu": "h100"}
    if job["ep"]:
        wl["parallelism"] = {"expert_parallel": job["ep"]}
    spec = build_spec({"name": "decide-grid", "gpus": job["gpus"], "hb_domain": 8, "radix": 64, "link_speed": 400, "catalog": "ndr-400g", "oversubscription": job["oversubscription"], "workload": wl}, {})
    s = pipeline.build(spec).summary
    d = s["decision"]
    step = {}
    for arch in ("rail-optimized", "rail-only"):
        rows = s["analysis"]["iteration"]["rows"]
        it = next(r for r in rows if r.get("arch", arch) == arch)["iteration_s"]
        a2a = 0.0
        if job["ep"]:
            row = s["analysis"]["alltoall"]["rows"][0]
            assert row["group_gpus"] == job["ep"]
            a2a = d["architectures"][arch]["alltoalls_per_step"] * row["clos_s" if arch == "rail-optimized" else "rail_only_pipelined_s"]
        step[arch] = it + a2a
        assert d["architectures"][arch]["step_s"] == pytest.approx(step[arch])
        assert d["architectures"][arch]["capex_usd"] == s["architectures"][arch]["cost"]
    capex = {a: s["architectures"][a]["cost"] for a in step}
    cheap = min(capex, key=lambda a: (capex[a], a == "rail-only"))  # a tie: rail-optimized
    dear = "rail-only" if cheap == "rail-optimized" else "rail-optimized"
    assert d["recommended"] == (cheap if step[cheap] <= step[dear] * (1 + decision.TOLERANCE) else dear)


def test_topogen_report_default_out_is_a_safe_name(built, tmp_path, monkeypatch):
    """The name in a build's summary.json is text from a file: out/<name>-report only for a safe name."""
    out, summary = built
    bad = tmp_path / "bad"
    bad.mkdir()
    doc = dict(summary)
    doc["spec"] = {**summary["spec"], "name": "../../escape"}
    (bad / "summary.json").write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["report", str(bad)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out" / "build-report" / "report.html").is_file()
    assert not (tmp_path.parent / "escape-report").exists()
