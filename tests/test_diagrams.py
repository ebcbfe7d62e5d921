"""Graphviz diagrams: overview, detail and rail views, read back from the DOT files.

The DOT text is parsed here by a small parser of the DOT language (no pydot in
the environment) and, when Graphviz's ``dot`` is installed, also by Graphviz
itself. Golden DOT files for the demo preset live in ``tests/golden/diagrams/``;
after an intended change of the diagrams, look at the rendered pictures, then
regenerate them with::

    TOPOGEN_REGEN_GOLDEN=1 .venv/bin/pytest tests/test_diagrams.py -k golden

and review the diff before committing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from topogen import pipeline
from topogen.cli import main
from topogen.exports import EXPORTERS
from topogen.exports.drawings import diagrams
from topogen.exports.drawings import overview as ov
from topogen.fabric.naming import GpuNames
from topogen.spec.cluster import build_spec, load_spec

GOLDEN = Path(__file__).parent / "golden" / "diagrams" / "demo"
REGEN = os.environ.get("TOPOGEN_REGEN_GOLDEN") == "1"
HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz 'dot' is not installed")

DEMO_FILES = [
    "overview", "rail-optimized/overview", "rail-optimized/detail", "rail-only/overview", "rail-only/detail", "rail-only/rail0",
    "rail-optimized/racks/compute", "rail-optimized/racks/leaf", "rail-optimized/racks/spine", "rail-only/racks/compute", "rail-only/racks/leaf",
]


# --- a small DOT parser ------------------------------------------------------------------------

_TOKEN = re.compile(r'\s+|//[^\n]*|"(?:[^"\\]|\\.)*"|->|--|[{}\[\];,=:]|[A-Za-z_\x80-\uffff][\w\x80-\uffff.]*|-?(?:\.\d+|\d+(?:\.\d*)?)|<', re.S)


def _tokens(text: str) -> list[str]:
    out, i = [], 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if not m:
            raise ValueError(f"DOT syntax error at {text[i:i + 40]!r}")
        tok = m.group(0)
        if tok == "<":  # an HTML string: up to the matching '>'
            depth, j = 0, i
            while True:
                depth += {"<": 1, ">": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
            out.append(text[i:j])
            i = j
            continue
        if not tok.isspace() and not tok.startswith("//"):
            out.append(tok)
        i = m.end()
    return out


def _unquote(tok: str) -> str:
    return tok[1:-1].replace('\\"', '"') if tok.startswith('"') else tok


class Dot:
    """What a DOT graph holds: nodes, edges, clusters and rank=same groups, with their attributes."""

    def __init__(self, text: str):
        self.nodes: dict[str, dict[str, str]] = {}
        self.edges: list[tuple[str, str, dict[str, str], str]] = []  # tail, head, attributes, tail port
        self.clusters: dict[str, list[str]] = {}
        self.cluster_attrs: dict[str, dict[str, str]] = {}
        self.ranks: list[list[str]] = []  # members of each rank=same subgraph
        self.graph_attrs: dict[str, str] = {}
        self.toks = _tokens(text)
        self.i = 0
        assert self._next() in ("digraph", "graph")
        if self._peek() != "{":
            self.name = _unquote(self._next())
        self._block([], self.graph_attrs)
        assert self.i == len(self.toks), "trailing tokens"

    def _peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def _next(self) -> str:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def _attrs(self) -> dict[str, str]:
        attrs: dict[str, str] = {}
        while self._peek() == "[":
            self._next()
            while self._peek() != "]":
                key = _unquote(self._next())
                assert self._next() == "="
                attrs[key] = _unquote(self._next())
                if self._peek() in (",", ";"):
                    self._next()
            self._next()
        return attrs

    def _id(self) -> str:
        tok = self._next()
        if tok in ("{", "}", "[", "]", ";", ",", "=", ":", "->", "--"):
            raise ValueError(f"DOT syntax error: expected an ID, got {tok!r}")
        return _unquote(tok)

    def _endpoint(self) -> tuple[str, str]:
        node = self._id()
        port = ""
        while self._peek() == ":":
            self._next()
            port += ":" + self._id()
        return node, port

    def _block(self, clusters: list[str], attrs: dict[str, str]) -> list[str]:
        """Parse ``{ ... }``; returns the nodes named in node statements of this block and below."""
        assert self._next() == "{"
        members: list[str] = []
        while self._peek() != "}":
            tok = self._peek()
            if tok == ";":
                self._next()
            elif tok == "subgraph" or tok == "{":
                name = ""
                if tok == "subgraph":
                    self._next()
                    if self._peek() != "{":
                        name = _unquote(self._next())
                sub: dict[str, str] = {}
                is_cluster = name.startswith("cluster")
                inner = self._block(clusters + ([name] if is_cluster else []), sub)
                members += inner
                if is_cluster:
                    self.clusters[name] = inner
                    self.cluster_attrs[name] = sub
                if sub.get("rank") == "same":
                    self.ranks.append(inner)
            elif tok in ("graph", "node", "edge") and self.toks[self.i + 1] == "[":
                self._next()
                got = self._attrs()
                if tok == "graph":
                    attrs.update(got)
            elif self.toks[self.i + 1] == "=":
                key = _unquote(self._next())
                self._next()
                attrs[key] = _unquote(self._next())
            else:
                ends = [self._endpoint()]
                while self._peek() in ("->", "--"):
                    self._next()
                    ends.append(self._endpoint())
                got = self._attrs()
                if len(ends) == 1:
                    members.append(ends[0][0])
                    self.nodes.setdefault(ends[0][0], {}).update(got)
                else:
                    for (a, ap), (b, _) in zip(ends, ends[1:]):
                        for n in (a, b):
                            self.nodes.setdefault(n, {})
                        self.edges.append((a, b, got, ap))
        self._next()
        return members

    def cables(self) -> list[tuple[str, str, dict[str, str], str]]:
        """Visible edges (layout helpers are ``style=invis``)."""
        return [e for e in self.edges if e[2].get("style") != "invis"]


def test_parser_reads_a_handwritten_graph():
    d = Dot('// c\ndigraph "g" { a [label=<<B>x</B>>]; subgraph cluster_x { label=y; b; "c d" [k="v \\" w"] } { rank=same; a; b } a -> b -> "c d" [w=1]; x:p1:n -> a }')
    assert set(d.nodes) == {"a", "b", "c d", "x"}
    assert d.nodes["a"]["label"] == "<<B>x</B>>" and d.nodes["c d"]["k"] == 'v " w'
    assert d.clusters == {"cluster_x": ["b", "c d"]} and d.cluster_attrs["cluster_x"] == {"label": "y"}
    assert d.ranks == [["a", "b"]]
    assert [(a, b) for a, b, _, _ in d.edges] == [("a", "b"), ("b", "c d"), ("x", "a")]
    assert d.edges[2][3] == ":p1:n"


def test_parser_rejects_broken_dot():
    with pytest.raises(ValueError, match="expected an ID"):
        Dot("digraph g { a -> [x=1] }")


# --- the demo build, written once ----------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo preset's diagrams, exported to a temp dir: (ctx, dir, paths)."""
    ctx = pipeline.build(load_spec("demo"))
    out = tmp_path_factory.mktemp("diagrams")
    paths = diagrams.export(ctx, out)
    return ctx, out, paths


@pytest.mark.parametrize("rel", DEMO_FILES)
def test_golden_demo(demo, rel):
    got = (demo[1] / f"{rel}.dot").read_bytes()
    golden = GOLDEN / f"{rel}.dot"
    if REGEN:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(got)
    assert golden.exists(), f"missing golden {golden}; see the module docstring to regenerate"
    assert got == golden.read_bytes(), f"{rel}.dot differs from its golden file; see the module docstring to regenerate"


def test_demo_writes_every_diagram(demo):
    ctx, out, paths = demo
    rel = sorted(p.relative_to(out).as_posix() for p in paths if p.suffix != ".html")
    formats = (".dot", ".svg", ".png") if HAS_DOT else (".dot",)
    assert rel == sorted(f"{r}{f}" for r in DEMO_FILES for f in formats)
    pages = sorted(p.relative_to(out).as_posix() for p in paths if p.suffix == ".html")  # every rack's elevation, Graphviz or not
    assert pages and all(p.split("/")[1] == "racks" for p in pages)
    for arch in ctx.fabrics:
        assert f"{arch}/racks/index.html" in pages
    assert ctx.messages == ([] if HAS_DOT else [diagrams.NO_DOT])


def test_every_dot_file_carries_provenance(demo):
    ctx, out, _ = demo
    stamp = ctx.spec.provenance()
    for rel in DEMO_FILES:
        text = (out / f"{rel}.dot").read_text(encoding="utf-8")
        assert text.splitlines()[0] == f"// generated by {stamp}"
        assert f"generated by {stamp}" in Dot(text).graph_attrs["label"], rel


@needs_dot
def test_svg_and_png_carry_provenance(demo):
    ctx, out, _ = demo
    for rel in DEMO_FILES:
        root = ET.parse(out / f"{rel}.svg").getroot()
        text = " ".join(t for t in root.itertext())
        assert ctx.spec.provenance() in text, rel
        assert (out / f"{rel}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_dot
@pytest.mark.parametrize("rel", DEMO_FILES)
def test_graphviz_reads_the_same_graph(demo, rel):
    """Graphviz's own parser sees the nodes and edges our parser sees."""
    path = demo[1] / f"{rel}.dot"
    ours = Dot(path.read_text(encoding="utf-8"))
    res = subprocess.run(["dot", "-Tjson0", str(path)], capture_output=True, check=True, timeout=120)
    assert res.stderr == b""
    theirs = json.loads(res.stdout)
    names = {o["name"] for o in theirs.get("objects", [])[theirs.get("_subgraph_cnt", 0) :]}  # subgraphs come first
    assert names == set(ours.nodes)
    assert len(theirs.get("edges", [])) == len(ours.edges)


# --- detail --------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_detail_has_every_device_and_cable(demo, arch):
    ctx, out, _ = demo
    fabric = ctx.fabrics[arch]
    d = Dot((out / arch / "detail.dot").read_text(encoding="utf-8"))
    cables = [e for e in d.cables()]
    assert sorted(int(e[2]["topogen_cable"]) for e in cables) == list(range(1, len(fabric.links) + 1))
    names = GpuNames(fabric.gpus, fabric.hb_domain)
    sw = [s.name for s in fabric.switches]
    for a, z, attrs, port in cables:
        i = int(attrs["topogen_cable"]) - 1
        a_dev, z_dev = int(fabric.links.a_dev[i]), int(fabric.links.z_dev[i])
        assert z == sw[z_dev - fabric.gpus]
        if a_dev < fabric.gpus:
            dom, rank = divmod(a_dev, fabric.hb_domain)
            assert (a, port) == (names.name(a_dev).split("-")[0], f":g{rank}:n")
            assert f"cable {i + 1}: {names.name(a_dev)} nic" in attrs["tooltip"]
        else:
            assert a == sw[a_dev - fabric.gpus]
    # every switch is a node; every GPU is a cell (port) of its HB domain's node
    assert set(sw) <= set(d.nodes)
    cells = sum(len(re.findall(r'PORT="g\d+"', d.nodes[f"hb{x:02d}"]["label"])) for x in range(ctx.spec.domains))
    assert cells == fabric.gpus


def test_detail_limit_is_inclusive(monkeypatch):
    fabric = pipeline.build(load_spec("demo")).fabrics["rail-optimized"]
    monkeypatch.setattr(diagrams, "DETAIL_MAX_DEVICES", fabric.num_devices)
    monkeypatch.setattr(diagrams, "DETAIL_MAX_CABLES", len(fabric.links))
    assert diagrams.detail_too_big(fabric) is None
    monkeypatch.setattr(diagrams, "DETAIL_MAX_CABLES", len(fabric.links) - 1)
    assert "exceed its limit" in diagrams.detail_too_big(fabric)
    monkeypatch.setattr(diagrams, "DETAIL_MAX_CABLES", len(fabric.links))
    monkeypatch.setattr(diagrams, "DETAIL_MAX_DEVICES", fabric.num_devices - 1)
    assert "exceed its limit" in diagrams.detail_too_big(fabric)


def test_big_fabric_gets_no_detail_and_a_message(tmp_path, monkeypatch):
    monkeypatch.setattr(diagrams, "dot_executable", lambda: None)  # DOT only: keeps the test fast
    ctx = pipeline.build(build_spec({"name": "big", "gpus": 1024, "hb_domain": 8, "radix": 64}))
    diagrams.export(ctx, tmp_path)
    assert not (tmp_path / "rail-optimized" / "detail.dot").exists()
    assert not (tmp_path / "rail-only" / "detail.dot").exists()
    assert (tmp_path / "rail-optimized" / "overview.dot").exists()
    assert ctx.messages[:2] == [
        "rail-optimized: no detail diagram: 1,072 devices and 2,048 cables exceed its limit (300 devices, 1,000 cables); see rail-optimized/overview, and cabling.csv for every cable",
        "rail-only: no detail diagram: 1,072 devices and 2,048 cables exceed its limit (300 devices, 1,000 cables); see rail-only/overview, and cabling.csv for every cable",
    ]


def test_cli_prints_the_messages(tmp_path, monkeypatch):
    monkeypatch.setattr(diagrams, "dot_executable", lambda: None)
    res = CliRunner().invoke(main, ["build", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--arch", "rail-only", "--formats", "diagrams", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    notes = [line for line in res.output.splitlines() if line.startswith("note: ")]
    assert notes == [
        "note: rail-only: no detail diagram: 1,072 devices and 2,048 cables exceed its limit (300 devices, 1,000 cables); see rail-only/overview, and cabling.csv for every cable",
        f"note: {diagrams.NO_DOT}",
    ]


# --- without Graphviz, and when it fails ---------------------------------------------------------------


def test_without_dot_writes_dot_only_and_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(diagrams, "dot_executable", lambda: None)
    ctx = pipeline.build(load_spec("demo"))
    paths = diagrams.export(ctx, tmp_path)
    assert {p.suffix for p in paths} == {".dot", ".html"}  # the rack elevations are HTML, written without Graphviz
    assert all(p.parent.name == "racks" for p in paths if p.suffix == ".html")
    assert len([p for p in paths if p.suffix == ".dot"]) == len(DEMO_FILES)
    assert ctx.messages == ["Graphviz 'dot' not found: install it with `apt-get install graphviz` to get SVG/PNG"]


def test_render_timeout_keeps_the_dot_file(tmp_path, monkeypatch):
    def slow(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, kw.get("timeout"))

    monkeypatch.setattr(diagrams, "dot_executable", lambda: "dot")
    monkeypatch.setattr(diagrams.subprocess, "run", slow)
    ctx = pipeline.build(build_spec({"name": "t", "gpus": 64, "hb_domain": 8, "radix": 16, "arch": "rail-optimized"}))
    paths = diagrams.export(ctx, tmp_path)
    assert {p.suffix for p in paths} == {".dot", ".html"}  # the rack elevations are HTML, written without Graphviz
    assert all(p.parent.name == "racks" for p in paths if p.suffix == ".html")
    assert ctx.messages[0] == f"rail-optimized/overview.svg not rendered: Graphviz took longer than {diagrams.RENDER_TIMEOUT_S} s; rail-optimized/overview.dot is written"
    assert len(ctx.messages) == 2 * len([p for p in paths if p.suffix == ".dot"])


def test_render_failure_is_reported(tmp_path, monkeypatch):
    def broken(cmd, **kw):
        raise subprocess.CalledProcessError(1, cmd, b"", b"Error: syntax error in line 3\nmore\n")

    monkeypatch.setattr(diagrams, "dot_executable", lambda: "dot")
    monkeypatch.setattr(diagrams.subprocess, "run", broken)
    ctx = pipeline.build(build_spec({"name": "t", "gpus": 64, "hb_domain": 8, "radix": 16, "arch": "rail-optimized"}))
    diagrams.export(ctx, tmp_path)
    assert ctx.messages[0] == "rail-optimized/overview.svg not rendered: dot failed: Error: syntax error in line 3; rail-optimized/overview.dot is written"


@needs_dot
def test_same_spec_same_bytes(tmp_path):
    spec = load_spec("demo")
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        diagrams.export(pipeline.build(spec), d)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files and all((a / f).read_bytes() == (b / f).read_bytes() for f in files)


def test_registered_as_an_exporter():
    assert EXPORTERS["diagrams"] is diagrams.export


# --- overview invariants over a grid ---------------------------------------------------------------------

# (gpus, hb_domain, radix, planes, rail_packing, provision): 1 to 4 tiers, partial groups,
# shared and dedicated rails, two planes, rack-scale HB domains, folded rows and columns
GRID = [
    (64, 8, 16, 1, "shared", "full"),
    (96, 8, 16, 2, "shared", "minimal"),
    (40, 8, 8, 1, "dedicated", "minimal"),
    (1000, 8, 64, 1, "shared", "full"),
    (1152, 72, 64, 1, "shared", "full"),
    (4096, 8, 32, 1, "dedicated", "full"),
    (16384, 8, 64, 1, "shared", "full"),
    (4096, 8, 8, 1, "shared", "minimal"),
    (512, 8, 64, 1, "shared", "full", "dual"),
    (4096, 8, 64, 2, "shared", "full", "dual"),
]


def _spec(gpus, hb, radix, planes, packing, provision, homing="planes"):
    return build_spec({"name": "grid", "gpus": gpus, "hb_domain": hb, "radix": radix, "planes": planes, "rail_packing": packing, "provision": provision, "homing": homing})


@pytest.fixture(scope="module", params=GRID, ids=lambda p: "-".join(f"{k}{v}" for k, v in zip(("n", "k", "r", "pl", "", "", ""), p)))
def grid(request):
    ctx = pipeline.build(_spec(*request.param))
    return ctx, {rel: Dot(g.source) for rel, g in diagrams.diagrams(ctx)}


def _plane0(fabric):
    L = fabric.links
    links = np.bincount(L.tier[L.plane == 0], minlength=fabric.tiers + 1)
    tiers = np.array([s.tier for s in fabric.switches if s.plane == 0])
    return links, np.bincount(tiers, minlength=fabric.tiers + 1)


def _boxes(d: Dot) -> list[dict[str, str]]:
    return [a for a in d.nodes.values() if "topogen_devices" in a]


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_overview_bundles_carry_every_link(grid, arch):
    ctx, dots = grid
    fabric = ctx.fabrics[arch]
    links, _ = _plane0(fabric)
    got = Counter()
    for _, _, attrs, _ in dots[f"{arch}/overview"].cables():
        got[int(attrs["topogen_tier"])] += int(attrs["topogen_links"])
    assert [got[j] for j in range(1, fabric.tiers + 1)] == links[1:].tolist()


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_overview_boxes_count_every_device(grid, arch):
    ctx, dots = grid
    fabric = ctx.fabrics[arch]
    _, switches = _plane0(fabric)
    per_row = Counter()
    for a in _boxes(dots[f"{arch}/overview"]):
        per_row[int(a["topogen_row"])] += int(a["topogen_devices"])
    assert per_row[0] == fabric.gpus
    assert [per_row[j] for j in range(1, fabric.tiers + 1)] == switches[1:].tolist()
    if arch == "rail-only":
        assert per_row[-1] == fabric.gpus  # the HB-domain row


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_overview_rows_stay_within_a_slide(grid, arch):
    ctx, dots = grid
    rows = Counter(int(a["topogen_row"]) for a in _boxes(dots[f"{arch}/overview"]))
    assert max(rows.values()) <= ov.ROW_MAX


def test_side_by_side_holds_both_overviews(grid):
    ctx, dots = grid
    both = dots["overview"]
    for k, arch in enumerate(ctx.fabrics):
        single = dots[f"{arch}/overview"]
        mine = {n[len(f"v{k}_"):] for n in both.nodes if n.startswith(f"v{k}_") and "topogen_devices" in both.nodes[n]}
        assert mine == {n for n, a in single.nodes.items() if "topogen_devices" in a}
    # one rank per row across both frames: the same tier at the same height
    for members in both.ranks:
        rows = {both.nodes[m]["topogen_row"] for m in members if "topogen_row" in both.nodes[m]}
        assert len(rows) == 1
        if rows == {"0"}:
            assert {m[:3] for m in members if m.startswith("v")} == {"v0_", "v1_"}


def test_rail_view_covers_one_rail(grid):
    ctx, dots = grid
    fabric = ctx.fabrics["rail-only"]
    d = dots["rail-only/rail0"]
    rows = Counter()
    for a in _boxes(d):
        rows[int(a["topogen_row"])] += int(a["topogen_devices"])
    mine = [s for s in fabric.switches if s.plane == 0 and 0 in s.rails]
    assert rows[0] == fabric.gpus // fabric.hb_domain
    assert [rows[j] for j in range(1, fabric.tiers + 1)] == [sum(s.tier == j for s in mine) for j in range(1, fabric.tiers + 1)]
    assert max(Counter(int(a["topogen_row"]) for a in _boxes(d)).values()) <= max(ov.ROW_MAX, ov.RAIL_GPU_MAX)
    # its cables: rank-0 GPUs to their leaves, and every cable among rail 0's switches
    L = fabric.links
    ids = np.array([i for i, s in enumerate(fabric.switches) if s.plane == 0 and 0 in s.rails]) + fabric.gpus
    inside = np.isin(L.z_dev, ids) & (np.isin(L.a_dev, ids) | ((L.a_dev < fabric.gpus) & (L.a_dev % fabric.hb_domain == 0)))
    assert sum(int(a["topogen_links"]) for _, _, a, _ in d.cables()) == int(inside.sum())


def test_only_rail_only_has_a_rail_view_and_one_arch_no_side_by_side():
    ctx = pipeline.build(build_spec({"name": "x", "gpus": 64, "hb_domain": 8, "radix": 16, "arch": "rail-optimized"}))
    assert [rel for rel, _ in diagrams.diagrams(ctx) if "/racks/" not in rel] == ["rail-optimized/overview", "rail-optimized/detail"]


# --- what the pictures say ----------------------------------------------------------------------------------


def _labels(d: Dot) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", a.get("label", "")) for a in d.nodes.values())


def test_demo_rail_view_names_the_shared_switch(demo):
    d = Dot((demo[1] / "rail-only" / "rail0.dot").read_text(encoding="utf-8"))
    text = _labels(d)
    assert "rail0-1-leaf" in text and "shared by rails 0–1 (VLAN/partition)" in text
    assert [n for n in d.nodes if n.startswith("gpu_")] == [f"gpu_{i}" for i in range(8)]
    assert all(f"hb0{i}-gpu0" in text for i in range(8))


def test_rail_only_overview_says_cross_rail_goes_through_nvlink(demo):
    d = Dot((demo[1] / "rail-only" / "overview.dot").read_text(encoding="utf-8"))
    assert "cross-rail traffic: GPU → NVLink → GPU of the destination rail" in d.cluster_attrs["cluster_hb"]["label"]
    assert len([n for n in d.clusters["cluster_hb"] if n.startswith("hb_")]) == 8
    nvlink = [e for e in d.cables() if e[2]["topogen_tier"] == "0"]
    assert len(nvlink) == 4 and all(e[2]["ltail"] == "cluster_hb" for e in nvlink)
    assert d.graph_attrs["compound"] == "true"


def test_large_overview_folds_rows_with_counts():
    spec = build_spec({"name": "big", "gpus": 16384, "hb_domain": 8, "radix": 64, "arch": "rail-optimized"})
    view = ov.overview(pipeline.build(spec).fabrics["rail-optimized"])
    more = {b.row: b.title for b in view.boxes if b.kind == "more"}
    assert more == {0: "… 61 more groups", 1: "… 61 more groups", 2: "… 13 more pods"}
    pods = [b for b in view.boxes if b.row == 2]
    assert [b.title for b in pods] == ["spine pod 0", "spine pod 1", "… 13 more pods", "spine pod 15"]
    assert pods[0].lines == ("32 spines", "leaves of groups 0–3")


def test_fold_keeps_head_and_tail():
    assert ov.fold(ov.ROW_MAX).tolist() == list(range(ov.ROW_MAX))
    n = ov.ROW_MAX + 1
    slots = ov.fold(n).tolist()
    assert slots[: ov.HEAD] == list(range(ov.HEAD))
    assert set(slots[ov.HEAD : n - ov.TAIL]) == {ov.HEAD}
    assert slots[n - ov.TAIL :] == list(range(ov.HEAD + 1, ov.HEAD + 1 + ov.TAIL))


# --- design: leaf-pair ---------------------------------------------------------------------------

LEAF_PAIRS = [(128, 8, 8, 128, 1, "1:1"), (96, 8, 2, 128, 2, "2:1"), (48, 4, 4, 64, 1, "3:1")]


@pytest.fixture(scope="module", params=LEAF_PAIRS, ids=lambda p: f"n{p[0]}-gpn{p[2]}-pl{p[4]}-{p[5]}")
def pair(request):
    n, k, gpn, r, planes, ratio = request.param
    spec = build_spec({"name": "lp", "design": "leaf-pair", "gpus": n, "hb_domain": k, "gpus_per_node": gpn, "radix": r, "planes": planes, "oversubscription": ratio})
    ctx = pipeline.build(spec)
    return ctx, {rel: Dot(g.source) for rel, g in diagrams.diagrams(ctx)}


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_leaf_pair_overview_draws_both_leaves_and_the_isl_bundle(pair, arch):
    ctx, dots = pair
    fabric = ctx.fabrics[arch]
    d = dots[f"{arch}/overview"]
    isl0 = int((fabric.isls.plane == 0).sum())
    across = [e for e in d.cables() if e[2].get("topogen_link") == "leaf-leaf"]
    gpu_leaf = [e for e in d.cables() if "topogen_link" not in e[2]]
    assert sum(int(e[2]["topogen_links"]) for e in gpu_leaf) == fabric.gpus  # plane 0: one cable per GPU
    if arch == "rail-optimized":
        assert len(across) == 1 and int(across[0][2]["topogen_links"]) == isl0 > 0
        a, z = (d.nodes[x]["label"] for x in across[0][:2])
        prefix = "pl0-" if ctx.spec.planes > 1 else ""
        assert f"{prefix}leaf-a" in a and f"{prefix}leaf-b" in z and across[0][2]["dir"] == "none"
    else:
        assert across == [] and "no link joins the two leaves" in d.graph_attrs["label"]
    rows = Counter()
    for a in _boxes(d):
        rows[int(a["topogen_row"])] += int(a["topogen_devices"])
    assert rows == {0: fabric.gpus, 1: 2}


def test_leaf_pair_detail_draws_every_isl_with_its_cable_id(pair):
    ctx, dots = pair
    fabric = ctx.fabrics["rail-optimized"]
    if diagrams.detail_too_big(fabric):
        pytest.skip("no detail diagram at this size")
    d = dots["rail-optimized/detail"]
    ids = sorted(int(e[2]["topogen_cable"]) for e in d.cables())
    assert ids == list(range(1, fabric.cables + 1))
    sw = [s.name for s in fabric.switches]
    for a, z, attrs, _ in d.cables():
        i = int(attrs["topogen_cable"]) - 1
        if i >= len(fabric.links):
            j = i - len(fabric.links)
            assert (a, z, attrs["topogen_link"]) == (sw[fabric.isls.a_dev[j] - fabric.gpus], sw[fabric.isls.z_dev[j] - fabric.gpus], "leaf-leaf")


@needs_dot
def test_leaf_pair_overview_renders(pair, tmp_path):
    ctx, _ = pair
    for rel, g in diagrams.diagrams(ctx):
        if rel.endswith("overview"):
            path = tmp_path / "x.dot"
            path.write_text(g.source, encoding="utf-8")
            res = subprocess.run(["dot", "-Tsvg", str(path)], capture_output=True, timeout=120)
            assert res.returncode == 0 and res.stderr == b"", (rel, res.stderr[-500:])
            assert b"ISLs" in res.stdout or "rail-only" in rel or rel == "overview"
