"""One expansion: the installed phase, the new spec's design around it, the stages and the figures.

:func:`expand` reads like the method: read the installed phase, generate the new
spec's design, lay it around the installed cables (:mod:`.rewire`), stage the moves
(:mod:`.stages`), and count. The baseline is what a plain rebuild of the new spec
(its own generated wiring) would change against the installed cables.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topogen.fabric import clos
from topogen.fabric.model import Fabric
from topogen.fabric.ports import switch_ports
from topogen.growth import phase as phase_mod
from topogen.growth import stages as stages_mod
from topogen.growth.addresses import AddressDelta
from topogen.growth.networks import NetGrowth
from topogen.growth.rewire import Rewire, Wire, baseline, identity, rewire
from topogen.spec.cluster import Spec
from topogen.util.errors import InputError, Problem

KEEP_BANDWIDTH = 0.75  # default floor: the share of the installed GPUs' bandwidth every stage keeps


@dataclass
class Expansion:
    """The plan of one architecture's expansion."""

    arch: str
    old: Spec
    new: Spec
    installed: list[Wire]
    design: Fabric  # the new spec's own generated wiring
    rewire: Rewire
    plan: stages_mod.Plan
    rebuild_changed: int  # installed cables a plain rebuild of the new spec would change
    relocated: int | None = None  # installed devices (GPUs counted one by one) the new layout places elsewhere (set when the files are written)
    floor: dict[str, int] | None = None  # the grown floor's figures (topogen.growth.floor.keep_positions)
    rack_map: dict[str, str] | None = None  # the new build's compute racks -> the grown floor's
    source: Path | None = None  # the installed phase's <arch> directory
    addresses: AddressDelta | None = None  # address plan and FRR files compared (set with the new build)
    networks: NetGrowth | None = None  # storage, in-band and OOB (set with the new build: :func:`topogen.growth.delta.grow_networks`)

    def figures(self) -> dict[str, Any]:
        """The expansion's figures, as expand.json and the terminal show them."""
        rw, n = self.rewire, max(self.rewire.installed, 1)
        names = {s.name for s in self.design.switches}
        switches_new = len(self.design.switches)
        return {
            "arch": self.arch,
            "from": {"spec": self.old.name, "gpus": self.old.gpus, "cables": rw.installed},
            "to": {"spec": self.new.name, "gpus": self.new.gpus, "cables": len(rw.final), "switches": switches_new},
            "cables": {"kept": len(rw.kept), "moved": len(rw.moved), "added": len(rw.added), "removed": len(rw.removed)},
            "changed_share": round(rw.changed / n, 4),
            "fewest_possible_share": round(rw.forced / n, 4),
            "rebuild": {"changed": self.rebuild_changed, "changed_share": round(self.rebuild_changed / n, 4)},
            "switches": {
                "new": len(rw.new_switches),
                "spare": len(rw.spare_switches),
                "relabelled": sum(1 for o, d in rw.relabelled.items() if d in names and identity(o) == identity(d)),
                "renumbered": sum(1 for o, d in rw.relabelled.items() if d in names and identity(o) != identity(d)),
            },
            "gpus_relabelled": sum(1 for d in rw.relabelled.values() if d not in names),
            "stages": len(self.plan.stages),
            "moving_stages": self.plan.moving,
            "keep_bandwidth": self.plan.keep,
            "worst_stage_share": round(self.plan.worst_share, 4),
            "stages_valid": all(s.valid for s in self.plan.stages),
            "final_valid": self.plan.final_errors == 0,
            "stage_detail": [
                {"stage": s.number, "unplug": len(s.unplug), "plug": len(s.plug), "share": {k: round(v, 4) for k, v in s.share.items()}, "valid": s.valid, "errors": s.checks, "cables_to_come": s.in_progress}
                for s in self.plan.stages
            ],
            "notes": rw.notes + self.plan.notes + ([f"{self.relocated:,} installed device(s) (GPUs counted one by one) are placed in another rack or U than the installed phase's: the pull sheets give the new positions"] if self.relocated else []),
            **({"relocated_devices": self.relocated} if self.relocated is not None else {}),
            **({"floor": self.floor} if self.floor is not None else {}),
            **({"addresses": self.addresses.figures()} if self.addresses is not None else {}),
            **({"networks": self.networks.figures()} if self.networks is not None and (self.networks.installed or self.networks.final) else {}),
        }


def installed_wires(ph: phase_mod.Phase, old: Fabric, new: Fabric) -> list[Wire]:
    """The installed cables as :class:`Wire`, lower end first, with tier and plane from the designs."""
    info = {}
    for fab in (old, new):
        for s in fab.switches:
            info.setdefault(identity(s.name), (s.tier, s.plane))
    native = switch_ports(old)  # the installed cabling.csv names switch ports natively (1/2, Ethernet8); growth plans by index p<n>
    index = {s.name: i for i, s in enumerate(old.switches)}

    def by_index(e):
        i = index.get(e.device)
        k = native.index(i, e.port) if i is not None and not e.port.startswith("nic") else None
        return e if k is None else type(e)(e.device, f"p{k}")

    out = []
    for c, cid in zip(ph.cables, ph.ids):
        a, z, sa, sz = by_index(c.a), by_index(c.z), c.speeds[0], c.speeds[1]
        ta = info.get(identity(a.device), (0, -1))[0]
        tz = info.get(identity(z.device), (0, -1))[0]
        if ta > tz:
            a, z, sa, sz = z, a, sz, sa
        tier, plane = info.get(identity(z.device), (0, 0))
        out.append(Wire(a.device, a.port, z.device, z.port, tier, plane, sa, sz, cid))
    return out


def check_growth(old: Spec, new: Spec, arch: str) -> None:
    """Refuse what is no growth of the same cluster (GPUs renumbered, another HB domain, fewer GPUs)."""
    problems = []
    if new.hb_domain != old.hb_domain:
        problems.append(Problem("NEW_SPEC.hb_domain", f"{new.hb_domain} differs from the installed phase's {old.hb_domain}: every GPU would be renumbered", f"keep hb_domain: {old.hb_domain}"))
    if new.gpus < old.gpus:
        problems.append(Problem("NEW_SPEC.gpus", f"{new.gpus:,} is fewer than the {old.gpus:,} installed", f"give at least {old.gpus:,} GPUs (expand grows a cluster)"))
    if new.planes != old.planes or new.homes != old.homes:
        problems.append(Problem("NEW_SPEC.planes", "the planes or homing differ from the installed phase's: every NIC would move", f"keep planes: {old.planes} and homing as installed"))
    if arch not in new.arches:
        problems.append(Problem("NEW_SPEC.arch", f"the new spec builds {', '.join(new.arches)}, not the installed {arch}", f"give arch: {arch} (or both)"))
    if problems:
        raise InputError(problems)


def expand(build_dir: str, new: Spec, arch: str | None = None, keep: float = KEEP_BANDWIDTH) -> Expansion:
    """Plan the growth of the installed phase in ``build_dir`` to ``new`` (one architecture)."""
    ph = phase_mod.read(build_dir, arch)
    check_growth(ph.spec, new, ph.arch)
    old_design = clos.generate(ph.spec, ph.arch)
    design = clos.generate(new, ph.arch)
    installed = installed_wires(ph, old_design, design)
    rw = rewire(installed, design)
    rw.notes.extend(_reserved_notes(old_design, design, rw))
    pl = stages_mod.plan(rw, _renamed(installed, rw), new, ph.arch, keep, ph.spec, installed)
    return Expansion(ph.arch, ph.spec, new, installed, design, rw, pl, baseline(installed, design), source=ph.path.parent)


def expand_build(build_dir: str, new: Spec, arch: str | None = None, keep: float = KEEP_BANDWIDTH) -> list[Expansion]:
    """Every architecture of ``build_dir`` that the new spec builds (or ``arch``), each planned by :func:`expand`."""
    if not 0 < keep < 1:
        raise InputError([Problem("keep-bandwidth", f"{keep} is not a share between 0 and 1", "e.g. --keep-bandwidth 0.75 (every stage keeps 75 % of the running jobs' bandwidth)")])
    have = phase_mod.built(build_dir)
    if not have:
        phase_mod.read(build_dir, arch)  # says what is wrong with the directory
    arches = [arch] if arch is not None else [a for a in have if a in new.arches] or have[:1]
    return [expand(build_dir, new, a, keep) for a in arches]


def _reserved_notes(old: Fabric, new: Fabric, rw: Rewire) -> list[str]:
    """A note when the leaf ports kept free for management / UFM (``reserved_leaf_ports``) move."""
    def ports(fab: Fabric) -> set[tuple[str, int]]:
        return {(identity(fab.switches[i].name), p) for i, first, last in fab.reserved for p in range(first, last + 1)}

    was, now = ports(old), ports(new)
    if was == now:
        return []
    freed, kept_free = len(was - now), len(now - was)
    return [f"reserved_leaf_ports: {freed} port(s) the installed phase kept free for management / UFM serve the new design's nodes, "
            f"and {kept_free} other port(s) are kept free instead: re-plug the UFM / management links (they are not in cabling.csv) before stage 0"]


def _renamed(installed: list[Wire], rw: Rewire) -> list[Wire]:
    m = rw.relabelled
    return [w._replace(a=m.get(w.a, w.a), z=m.get(w.z, w.z)) for w in installed]
