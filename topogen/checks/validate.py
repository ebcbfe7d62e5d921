"""Validation: prove a wiring right, or say exactly which cable, port or switch is wrong.

:func:`validate` takes a :class:`~topogen.fabric.model.Fabric` (generated, or read back
from a file by :mod:`topogen.wiring`) and runs six checks. Every problem is a
:class:`Finding` (data: check id, severity, devices, ports, cables, message,
hint); the key figures go in :attr:`Report.figures`. :func:`render` turns a
report into text; nothing here prints. The parts live in :mod:`topogen.checks`.

Checks and their finding ids (stable; ``validation.json`` and tests use them):

1. ``hygiene``: ``hygiene.dangling`` (an end on no device), ``hygiene.unknown-device``
   (a name the spec's switch table lacks; found by the reader), ``hygiene.self-link``,
   ``hygiene.bad-port`` (not a port of that device), ``hygiene.port-reuse``,
   ``hygiene.port-budget`` (more cables than radix), ``hygiene.gpu-no-link``,
   ``hygiene.gpu-extra-link`` (per NIC port = plane), ``hygiene.speed-mismatch``
   (two ends disagree), ``hygiene.link-speed`` (both ends off the spec's speed),
   ``hygiene.plane-mismatch`` (a cable joins two planes), ``hygiene.breakout-split``
   (the legs of one breakout cable of a cabling file on two switches or cages),
   ``hygiene.reserved-port`` (a cable on a leaf port kept for management / UFM,
   ``reserved_leaf_ports``).
2. ``tiers``: ``tiers.adjacent`` (links join adjacent tiers only),
   ``tiers.unreachable`` (a switch with no cable or no GPU behind it),
   ``tiers.count`` (tier count against the minimum for the spec).
3. ``rails``: ``rails.cross-rail`` (rail-only: a cable joins two rails' networks),
   ``rails.leaf-alignment`` (rail-optimized: a GPU on another rail's leaf),
   ``rails.shared-switch`` (several rails on one switch: info, error when the
   spec asks for dedicated rails), ``rails.pair-one-leaf`` (``homing: dual``: both
   ports of a GPU's pair on one leaf), ``rails.pair-split`` (the two ports on leaves of
   two different pairs), ``rails.pair-link`` (a cable between the two leaves of a
   dual-homed pair).
4. ``reach``: ``reach.unlinked`` (GPUs with no cable in a plane),
   ``reach.partition`` (a plane, or a rail in rail-only, split in parts).
   Proved with connected components; the worst-case path is exact, from
   bounded breadth-first searches (linear in cables on a Clos).
5. ``capacity``: ``capacity.oversubscription`` (downlink against uplink capacity
   per switch), ``capacity.striping`` (same number of parallel links to each upper
   switch; with ``striping: minimal`` at most one apart), ``capacity.provisioning`` (``provision: full`` builds every uplink port
   below the top tier), ``capacity.bisection`` (networkx max-flow across a cut,
   small clusters), ``capacity.isl`` (``design: leaf-pair``: an inter-switch link off
   the design's ports, or one missing; a pair short of ISLs is also
   ``capacity.oversubscription``, GPU:ISL).

A leaf pair's ISLs (``fabric.isls``) are checked with the links: every check reads
``fabric.cable_table()``; an ISL is the one cable allowed within a tier.
6. ``failure``: ``failure.switch`` / ``failure.link`` (info): for the busiest
   switch of each tier and one cable of each tier, GPUs cut off and capacity lost.

The file reader (:mod:`topogen.asbuilt.wiring`) adds ``input.spec-mismatch`` (the file
names another spec) and ``input.foreign-switch`` (switch names of the other
rail packing), both warnings.

Figures come from numpy columns, never one Python object per cable, so a
65,536-GPU fabric validates in well under a second per check.
"""

from __future__ import annotations

from topogen.checks import capacity, failure, hygiene, rails, reach, tiers
from topogen.checks.capacity import MAXFLOW_LINKS
from topogen.checks.findings import CHECK_IDS, GROUPS, MAX_PER_CHECK, SEVERITIES, Finding, Labels, Report
from topogen.checks.graphs import components, leaf_distance, unique
from topogen.checks.planes import PlaneGraph
from topogen.checks.render import render, summary_line
from topogen.checks.wire import Wire
from topogen.fabric import clos
from topogen.fabric.model import Fabric

__all__ = [
    "CHECK_IDS",
    "GROUPS",
    "MAXFLOW_LINKS",
    "MAX_PER_CHECK",
    "SEVERITIES",
    "Finding",
    "Labels",
    "Report",
    "components",
    "leaf_distance",
    "render",
    "summary_line",
    "unique",
    "validate",
]


def validate(
    fabric: Fabric, labels: Labels | None = None, pre: list[Finding] | tuple = (), source: str = "", maxflow_links: int = MAXFLOW_LINKS, expected: Fabric | None = None
) -> Report:
    """Run the six checks on ``fabric`` against its spec and return the :class:`Report`.

    ``labels`` names cables after the file they came from; ``pre`` holds the
    findings the file reader made (unknown devices, dropped rows). Max-flow
    bisection runs only when the fabric has at most ``maxflow_links`` cables.
    ``expected`` is the spec's own wiring (generated when not given): striping is
    checked against its switch-to-switch table, so a finding names the wrong cable.
    """
    report = Report(fabric.arch, fabric.spec, source=source, figures={"gpus": fabric.gpus, "switches": len(fabric.switches), "cables": fabric.cables})
    w = Wire(fabric, labels, report)
    w.add_findings(pre)  # the file reader's, under the same per-check caps
    if expected is None:
        expected = clos.generate(fabric.spec, fabric.arch)
    hygiene.check(w, expected)  # 1. every cable as written: ends, ports, speeds, planes, reserved leaf ports
    w.orient()  # the good cables, lower-tier end first, for the checks below
    graph = PlaneGraph(w)  # one graph per plane, shared by 2 and 4-6
    tiers.check(w, graph)  # 2
    rails.check(w)  # 3
    reach.check(w, graph)  # 4
    capacity.check(w, graph, maxflow_links, expected)  # 5
    failure.check(w, graph)  # 6
    return report


STRUCTURE = ("hygiene.self-link", "hygiene.port-reuse", "hygiene.bad-port", "hygiene.port-budget", "hygiene.dangling", "tiers.adjacent")


def structure_errors(fabric: Fabric, labels: Labels | None = None, source: str = "", expected: Fabric | None = None) -> list[Finding]:
    """The errors that leave a wiring no network to route over: a port used twice, a self-loop, a port the switch lacks, more cables than ports, a dangling end, a cable between non-adjacent tiers.

    Checks 1 and 2 only (linear in the cables), so ``topogen simulate`` can refuse
    such a wiring before it routes anything; the full :func:`validate` lists the rest.
    """
    report = Report(fabric.arch, fabric.spec, source=source)
    w = Wire(fabric, labels, report)
    hygiene.check(w, expected if expected is not None else clos.generate(fabric.spec, fabric.arch))
    w.orient()
    tiers.check(w, None)
    return [f for f in report.findings if f.severity == "error" and f.check in STRUCTURE]
