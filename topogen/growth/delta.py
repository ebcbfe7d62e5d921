"""The expansion as files: what installers, buyers and the scheduler's admins use.

Per architecture, in ``<out>/<arch>/``:

* ``cabling.csv``: the new wiring, the columns of ``topogen build``'s cabling.csv;
  a kept or moved cable keeps its installed cable id (and so its label), a new
  cable takes the next free id. ``topogen validate`` and ``topogen diff`` read it as
  any build's plan;
* ``delta.csv``: every cable to add, move and remove, by stage, in cabling.csv's
  columns (the cable as it will be; a removal as it was) plus ``stage``, ``action``
  and, for a move, the end it leaves (``from_device``, ``from_port``, the name as
  installed);
* ``switches.csv``: every switch that is new, whose cables change (its port
  configuration and, where the plan numbers links, their addresses change), or that
  becomes spare; switches not listed keep every cable;
* ``bom-delta.csv``: per SKU of the two builds' bills (switches, transceivers,
  cables by length), the quantity to buy and the quantity that becomes spare;
* ``slurm/topology.conf``: the new tree topology for Slurm.

``expand.json`` (top level) holds the figures of every architecture.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from topogen.asbuilt import wiring
from topogen.bom.bill import sku_lines
from topogen.exports.slurm import tree_lines
from topogen.fabric.view import csv_header
from topogen.growth.expansion import Expansion
from topogen.growth.rewire import Wire
from topogen.growth.stages import raw_of
from topogen.spec.counts import link_tier_name, tier_role
from topogen.util.text import csv_line

COLUMNS = ("cable", "tier", "link", "plane", "a_device", "a_role", "a_port", "a_speed_gbps", "z_device", "z_role", "z_port", "z_speed_gbps")
DELTA_COLUMNS = ("stage", "action", *COLUMNS, "from_device", "from_port")


def _roles(e: Expansion) -> dict[str, str]:
    roles = {s.name: tier_role(s.tier) for s in e.design.switches}
    return roles


def _row(w: Wire, roles: dict[str, str]) -> tuple:
    def role(dev: str, port: str) -> str:
        return "gpu" if port.startswith("nic") else roles.get(dev, "spare")

    return (w.cable, w.tier, link_tier_name(w.tier), w.plane, w.a, role(w.a, w.a_port), w.a_port, w.a_speed, w.z, role(w.z, w.z_port), w.z_port, w.z_speed)


def cabling_lines(e: Expansion) -> Iterator[str]:
    """The new wiring's cabling.csv, in cable-id order."""
    roles = _roles(e)
    yield csv_header(COLUMNS)
    for w in sorted(e.rewire.final, key=lambda x: x.cable):
        yield csv_line(_row(w, roles))


def delta_lines(e: Expansion) -> Iterator[str]:
    """delta.csv: stage by stage, the cables unplugged (moves' new places, removals), then those plugged."""
    roles = _roles(e)
    moved = {m.before.ends(): m for m in e.rewire.moved}
    back = {v: k for k, v in e.rewire.relabelled.items()}  # the end a move leaves, by the name on its label today
    yield csv_header(DELTA_COLUMNS)
    for st in e.plan.stages:
        for w in st.unplug:
            m = moved.get(w.ends())
            if m is None:
                yield csv_line((st.number, "remove", *_row(w, roles), "", ""))
        for w in st.unplug:
            m = moved.get(w.ends())
            if m is not None:
                dev, port = m.unplugged
                yield csv_line((st.number, "move", *_row(m.after, roles), back.get(dev, dev), port))
        plugged = {m.after.ends() for m in e.rewire.moved}
        for w in st.plug:
            if w.ends() not in plugged:
                yield csv_line((st.number, "add", *_row(w, roles), "", ""))


def switch_lines(e: Expansion) -> Iterator[str]:
    """switches.csv: new, changed and spare switches with the cables each gains and loses."""
    roles = _roles(e)
    gain: dict[str, int] = {}
    lose: dict[str, int] = {}
    rw = e.rewire
    for w in [m.after for m in rw.moved] + rw.added:
        for d, p in w.ends():
            if not p.startswith("nic"):
                gain[d] = gain.get(d, 0) + 1
    for w in [m.before for m in rw.moved] + rw.removed:
        for d, p in w.ends():
            if not p.startswith("nic"):
                lose[d] = lose.get(d, 0) + 1
    # a move keeps one end: that end's switch neither gains nor loses a cable there
    for m in rw.moved:
        d, p = [x for x in m.before.ends() if x in m.after.ends()][0]
        if not p.startswith("nic"):
            gain[d] -= 1
            lose[d] -= 1
    new = set(rw.new_switches)
    spare = set(rw.spare_switches)
    yield csv_header(("switch", "role", "status", "cables_gained", "cables_lost", "was"))
    back = {v: k for k, v in rw.relabelled.items()}
    for s in e.design.switches:
        g, lo = gain.get(s.name, 0), lose.get(s.name, 0)
        status = "new" if s.name in new else "changed" if (g or lo) else ""
        if status or s.name in back:
            yield csv_line((s.name, tier_role(s.tier), status or "relabelled", g, lo, back.get(s.name, "")))
    for name in rw.spare_switches:
        if name in spare:
            yield csv_line((name, roles.get(name, "switch"), "spare", 0, lose.get(name, 0), ""))


def bom_delta(old_bom, new_bom) -> list[dict[str, Any]]:
    """Per SKU: the installed and new quantities, what to buy and what becomes spare."""
    have = {x.sku: x for x in sku_lines(old_bom.lines)}
    want = {x.sku: x for x in sku_lines(new_bom.lines)}
    rows = []
    for sku in list(want) + [s for s in have if s not in want]:
        x = want.get(sku) or have[sku]
        q0 = have[sku].quantity if sku in have else 0
        q1 = want[sku].quantity if sku in want else 0
        rows.append({"category": x.category, "sku": sku, "description": x.description, "installed": q0, "new": q1, "buy": max(0, q1 - q0), "spare": max(0, q0 - q1), "unit_price": x.unit_price})
    return rows


def bom_lines(rows: list[dict[str, Any]]) -> Iterator[str]:
    cols = ("category", "sku", "description", "installed", "new", "buy", "spare", "unit_price")
    yield csv_header(cols)
    for r in rows:
        yield csv_line(tuple(r[c] for c in cols))


def final_fabric(e: Expansion):
    """The new wiring as a Fabric of the new spec (what Slurm's topology and the validator read)."""
    return wiring.to_fabric(raw_of(e.rewire.final, e.arch, "cabling.csv"), e.new, e.arch).fabric


def write(e: Expansion, root: Path, boms: tuple | None = None) -> list[Path]:
    """Write one architecture's files under ``root/<arch>/``; returns their paths."""
    d = root / e.arch
    (d / "slurm").mkdir(parents=True, exist_ok=True)
    out = []
    for name, lines in (("cabling.csv", cabling_lines(e)), ("delta.csv", delta_lines(e)), ("switches.csv", switch_lines(e))):
        p = d / name
        p.write_text("".join(lines), encoding="utf-8")
        out.append(p)
    if boms is not None:
        p = d / "bom-delta.csv"
        p.write_text("".join(bom_lines(bom_delta(*boms))), encoding="utf-8")
        out.append(p)
    p = d / "slurm" / "topology.conf"
    p.write_text("".join(x + "\n" for x in tree_lines(final_fabric(e))), encoding="utf-8")
    out.append(p)
    return out


def figures_json(figures: list[dict[str, Any]], bom_rows: dict[str, list]) -> str:
    for f in figures:
        rows = bom_rows.get(f["arch"])
        if rows is not None:
            f["buy"] = [{k: r[k] for k in ("category", "sku", "buy")} for r in rows if r["buy"]]
            f["spare"] = [{k: r[k] for k in ("category", "sku", "spare")} for r in rows if r["spare"]]
    return json.dumps({"expansions": figures}, indent=2) + "\n"


def summary_json(new, figures: list[dict[str, Any]]) -> str:
    """summary.json: the new spec (so ``topogen validate`` and ``diff`` read the new cabling.csv as a plan) and the figures."""
    return json.dumps({"spec_sha256": new.digest(), "spec": new.to_dict(), "expansion": figures}, indent=2) + "\n"
