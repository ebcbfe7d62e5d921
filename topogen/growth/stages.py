"""The move plan in stages, each checked on its intermediate wiring.

Stage 0 installs the new switches and every new cable whose two ports are free in
the installed wiring: nothing running is touched. Each later stage unplugs a batch
of installed cables (moves and removals), re-plugs the moves, and installs the new
cables whose ports that batch (or an earlier one) freed. Two wirings are checked
per stage:

* **during** the stage, with the batch unplugged: the running jobs' bandwidth, from
  the traffic simulator (:mod:`topogen.traffic`, spray routing, max-min fair rates):
  a DP ring all-reduce and a half shift (HB domain d to d + D/2, rank to rank: the
  first half of the installed GPUs sends to the second, so across the upper tiers
  as much as the leaves' uplinks carry) among the installed GPUs, as a share of what the installed wiring gives them
  (the lower of the two; today's figure from the installed phase's own spec). The new
  GPUs, idle until the expansion ends, are left out; a running GPU without a cable
  during the stage gets nothing;
* **after** the stage: the validator (:func:`topogen.checks.validate.validate`) on the
  wiring against the new spec. A stage is valid when it has no error other than
  those of a build still in progress (:data:`IN_PROGRESS`: cables the new design
  has and the stage has not installed yet: new GPUs not yet linked, leaves not yet
  at their full uplinks or striping); the final stage must have none at all.

The number of re-cabling stages is the fewest that keeps the floor: 1, 2, ...
are tried in turn (then one cable per switch per stage), each switch's moves
spread evenly over the stages in order of their new upper switch, so every leaf
of a stage moves towards the same new spines; each try is simulated, and the
first whose every stage keeps the floor is the plan. When none does, the plan is
the try whose worst stage keeps the most, and a note says so.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from topogen.asbuilt import wiring
from topogen.asbuilt.diff import attribute
from topogen.checks import validate as checks
from topogen.growth.rewire import Rewire, Wire
from topogen.traffic import patterns, simulate
from topogen.traffic.patterns import Pairs

IN_PROGRESS = frozenset(
    {
        "hygiene.gpu-no-link",
        "reach.unlinked",
        "reach.partition",
        "tiers.unreachable",
        "capacity.oversubscription",
        "capacity.striping",
        "capacity.provisioning",
        "capacity.bisection",
    }
)
PATTERNS = ("ring-allreduce", "half-shift")


@dataclass
class Stage:
    """One stage: what it unplugs, re-plugs and installs, and what the checks found."""

    number: int
    unplug: list[Wire]  # installed cables unplugged (moves' old places, removals)
    plug: list[Wire]  # cables plugged (moves' new places, new cables)
    share: dict[str, float] = field(default_factory=dict)  # pattern -> bandwidth share of the installed GPUs during the stage
    errors: int = 0  # validator errors after the stage, other than a build in progress
    in_progress: int = 0  # errors of a build in progress (cables still to come)
    checks: list[str] = field(default_factory=list)  # ids of the errors that made the stage invalid

    @property
    def worst_share(self) -> float:
        return min(self.share.values()) if self.share else 1.0

    @property
    def valid(self) -> bool:
        return self.errors == 0


@dataclass
class Plan:
    stages: list[Stage]
    keep: float
    final_errors: int
    final_checks: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def worst_share(self) -> float:
        return min((s.worst_share for s in self.stages), default=1.0)

    @property
    def moving(self) -> int:
        """Stages that unplug something (stage 0 only adds)."""
        return sum(1 for s in self.stages if s.unplug)


def plan(rw: Rewire, installed: list[Wire], spec, arch: str, keep: float, old_spec, as_installed: list[Wire], key: int = 0) -> Plan:
    """Stages of ``rw`` keeping at least ``keep`` of the installed GPUs' bandwidth (0 < keep < 1), validated.

    ``installed`` are the installed cables named as in the new design, ``as_installed``
    as installed; the bandwidth the running jobs have is simulated on those against
    ``old_spec`` (the installed phase's own switch table).
    """
    gpus_installed = old_spec.gpus
    ops = [(m.before, m.after) for m in rw.moved] + [(w, None) for w in rw.removed]
    per: dict[str, int] = defaultdict(int)
    for b, _a in ops:
        per[b.a] += 1
    sim = _Sim(spec, arch, gpus_installed, key)
    idle = {w.a for w in rw.final if w.tier == 1} - {w.a for w in installed if w.tier == 1}  # the new GPUs: idle until the end
    base = _Sim(old_spec, arch, gpus_installed, key).rates(as_installed)  # what the running jobs have today
    most = max(per.values(), default=0)
    best: tuple | None = None
    for count in _counts(most):
        stages, current = _try(rw, installed, ops, per, count, sim, idle, base)
        worst = min((st.worst_share for st in stages if st.unplug), default=1.0)
        if best is None or worst > best[0] + 1e-9:
            best = (worst, stages, current)
        if worst + 1e-9 >= keep:
            best = (worst, stages, current)
            break
    worst, stages, current = best
    _validate_stages(stages, installed, spec, arch)
    notes = []
    if worst + 1e-9 < keep:
        notes.append(f"no staging tried keeps {keep:.0%} of the bandwidth; the best keeps {worst:.1%} in its worst stage")
    final_errors, _, final_checks = _check(current, spec, arch, final=True)
    return Plan(stages, keep, final_errors, final_checks, notes)


MAX_COUNTS = 12  # stage counts tried


def _counts(most: int) -> list[int]:
    """Re-cabling stage counts to try, fewest first: 1, 2, ... and at last one cable per switch per stage."""
    if most == 0:
        return [0]
    out = list(range(1, min(most, MAX_COUNTS) + 1))
    return out if most in out else out + [most]


def _try(rw: Rewire, installed: list[Wire], ops: list, per: dict[str, int], count: int, sim, idle: set, base: dict) -> tuple[list[Stage], list[Wire]]:
    """The stages with ``count`` re-cabling batches, each simulated while its batch is out; and the final wiring."""
    cap = {dev: -(-n // count) for dev, n in per.items()} if count else {}
    stages = _stages(rw, installed, _batch(ops, cap))
    current = list(installed)
    for st in stages:
        during = _minus(current, st.unplug)
        got = sim.rates([w for w in during if w.a not in idle])
        st.share = {p: _share(got[p], base[p]) for p in PATTERNS}
        current = during + st.plug
    return stages, current


def _validate_stages(stages: list[Stage], installed: list[Wire], spec, arch: str) -> None:
    """The validator on the wiring after each stage (the chosen plan's only)."""
    current = list(installed)
    for st in stages:
        current = _minus(current, st.unplug) + st.plug
        st.errors, st.in_progress, st.checks = _check(current, spec, arch, final=False)


def _batch(ops: list[tuple[Wire, Wire | None]], cap: dict[str, int]) -> list[list[tuple[Wire, Wire | None]]]:
    """Ops into batches: each switch's ops in order of their new upper end, at most ``cap`` per switch per batch.

    A move whose new port another moving cable still holds goes in that cable's batch
    (or a later one), so it is never left unplugged waiting for its port.
    """
    per: dict[str, list[int]] = defaultdict(list)
    for i, op in enumerate(ops):
        per[op[0].a].append(i)
    stage = [0] * len(ops)
    for dev in sorted(per):
        mine = sorted(per[dev], key=lambda i: ((ops[i][1].z, ops[i][1].z_port) if ops[i][1] is not None else ("~", ""), ops[i][0].a_port))
        for k, i in enumerate(mine):
            stage[i] = k // cap.get(dev, 1)
    holder = {e: i for i, (b, _a) in enumerate(ops) for e in b.ends()}
    blockers = [[holder[e] for e in a.ends() if e in holder and holder[e] != i] if a is not None else [] for i, (_b, a) in enumerate(ops)]
    for _ in range(max(stage, default=0) + 1):  # raise each op to its blockers' batch, to a fixpoint
        changed = False
        for i, bl in enumerate(blockers):
            for j in bl:
                if stage[j] > stage[i]:
                    stage[i], changed = stage[j], True
        if not changed:
            break
    batches: dict[int, list] = defaultdict(list)
    for i, op in enumerate(ops):
        batches[stage[i]].append(op)
    return [batches[i] for i in sorted(batches)]


def _stages(rw: Rewire, installed: list[Wire], batches: list[list]) -> list[Stage]:
    """Stage 0 (new cables on ports free now), then one stage per batch.

    A stage unplugs its batch, then plugs every cable still to place whose two ports
    are free by then: its moves at their new places first, then new cables. A move whose
    new port another batch still holds waits (unplugged) for the stage that frees it.
    """
    busy: set = {e for w in installed for e in w.ends()}
    pending: list[Wire] = []
    adds = list(rw.added)
    stages = []
    for n, batch in enumerate([[]] + batches):
        unplug = [b for b, _ in batch]
        for w in unplug:
            busy.difference_update(w.ends())
        pending = pending + [a for _, a in batch if a is not None]
        plug, rest = [], []
        for w in pending + adds:
            if not (set(w.ends()) & busy):
                plug.append(w)
                busy.update(w.ends())
            else:
                rest.append(w)
        waiting = set(pending)
        pending = [w for w in rest if w in waiting]
        adds = [w for w in rest if w not in waiting]
        stages.append(Stage(n, unplug, plug))
    if pending or adds:  # pragma: no cover - every port a cable takes is free or freed by some batch
        raise AssertionError(f"{len(pending) + len(adds)} cable(s) found no free ports")
    return stages


def _minus(wires: list[Wire], gone: list[Wire]) -> list[Wire]:
    drop = {w.ends() for w in gone}
    return [w for w in wires if w.ends() not in drop]


def raw_of(wires: list[Wire], arch: str, source: str = "stage") -> wiring.RawWiring:
    """Cables as a wiring the reader builds a Fabric from against a spec."""
    ids = list(range(1, len(wires) + 1))
    return wiring.RawWiring(
        Path(source), "as-built", arch, None, None,
        [w.a for w in wires], [w.a_port for w in wires], [w.z for w in wires], [w.z_port for w in wires],
        [w.a_speed for w in wires], [w.z_speed for w in wires], ids, ids, loc_fmt="cable #{}",
    )


def validate(wires: list[Wire], spec, arch: str, source: str = "stage") -> checks.Report:
    """The validator's report on ``wires`` against ``spec``."""
    w = wiring.to_fabric(raw_of(wires, arch, source), spec, arch)
    return checks.validate(w.fabric, labels=w.labels, pre=w.findings, source=source)


def _check(wires: list[Wire], spec, arch: str, final: bool) -> tuple[int, int, list[str]]:
    """(errors that count, errors of a build in progress, ids of those that count)."""
    report = validate(wires, spec, arch)
    ids = [f.check for f in report.findings if f.severity == "error"]
    ids += [c for c, (sev, n) in report.suppressed.items() if sev == "error" for _ in range(n)]
    hard = ids if final else [c for c in ids if c not in IN_PROGRESS]
    return len(hard), len(ids) - len(hard), sorted(set(hard))


class _Sim:
    """The installed GPUs' DP ring and a permutation, simulated on a wiring of the new spec."""

    def __init__(self, spec, arch: str, gpus: int, key: int):
        self.spec, self.arch = spec, arch
        hb = spec.hb_domain
        self.hb = spec.hb_bandwidth_gbps or float("inf")
        ring = patterns.pairs(patterns.Pattern("ring-allreduce"), gpus, hb, key)
        half = patterns.pairs(patterns.Pattern("shift", max(1, gpus // hb // 2)), gpus, hb, key)
        self.pairs = {"ring-allreduce": ring, "half-shift": half}

    def rates(self, wires: list[Wire]) -> dict[str, float]:
        """Total max-min fair rate (Gb/s) of each pattern's pairs over ``wires``."""
        fab = wiring.to_fabric(raw_of(wires, self.arch), self.spec, self.arch).fabric
        linked = np.zeros(fab.gpus, bool)
        linked[fab.links.a_dev[fab.links.a_dev < fab.gpus]] = True
        out = {}
        for name, prs in self.pairs.items():
            ok = linked[prs.src] & linked[prs.dst]  # a pair with an end unplugged moves nothing
            if not ok.any():
                out[name] = 0.0
                continue
            prs = Pairs(prs.src[ok], prs.dst[ok], prs.size[ok])
            with np.errstate(invalid="ignore"):  # a link carrying nothing divides 0 by its capacity
                res = simulate.run(fab, patterns.Pattern("matrix", name), "spray", self.hb, matrix=Pairs(prs.src, prs.dst, np.ones(len(prs.src))))
            out[name] = float(res.pair_rate.sum())
        return out


def _share(now: float, base: float) -> float:
    return 1.0 if base <= 0 else min(1.0, now / base)


def in_progress(report: checks.Report) -> checks.Report:
    """``report`` of a stage before the last: the errors of a build in progress (:data:`IN_PROGRESS`) become warnings, saying so."""
    found = [replace(f, severity="warning", message=f"build in progress (cables of later stages): {f.message}") if f.severity == "error" and f.check in IN_PROGRESS else f for f in report.findings]
    suppressed = {c: ("warning" if sev == "error" and c in IN_PROGRESS else sev, n) for c, (sev, n) in report.suppressed.items()}
    return replace(report, findings=found, suppressed=suppressed)


def rejudge(cmp, found) -> None:
    """``topogen diff --stage N`` of a stage before the last: the design checks' errors of a build in progress become warnings, and each deviation is judged again on what remains.

    ``cmp`` is :func:`topogen.asbuilt.sources.diff`'s comparison, ``found`` the as-built
    cables it read (their ids as the diff gave them to the validator: 1, 2, ... in order).
    """
    report = getattr(cmp, "report", None)
    if not isinstance(report, checks.Report):
        return
    cmp.deviations = [replace(d, severity="warning", because=()) for d in cmp.deviations]
    attribute(cmp, in_progress(report), {c.key(): i for i, c in enumerate(found.cables, 1)})
