"""Why each family of designs lost: the front design that beats its best member, and by how much.

A family is the designs of one architecture, catalog and HB-domain size (the
choices an architect argues about; radix, speed and oversubscription vary within
it). A family with a design on the front says so; any other is represented by its
best member on the objective the search chooses by, and the first front design
that dominates that member (or the nearest, by the largest margin) is named with
the change on every objective.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from topogen.search.front import dominates
from topogen.search.space import CONSTRAINTS, OBJECTIVES, breaks


def family_of(row: dict[str, Any]) -> str:
    return f"{row['arch']} / {row['catalog']} / K={row['hb_domain']}"


def _change(a: float | None, b: float | None) -> str:
    """``b`` against ``a`` in words: ``+23.4%`` or ``same``."""
    if a is None or b is None:
        return "n/a"
    if a == b:
        return "same"
    if a == 0:
        return f"+{b:,.4g}"
    return f"{(b / a - 1) * 100:+.1f}%"


def families(rows: Sequence[dict[str, Any]], front: Sequence[dict[str, Any]], objectives: Sequence[str], constraints: dict[str, float], label: Callable[[dict[str, Any]], str]) -> list[dict[str, Any]]:
    """One entry per family (in the order the space lists them): on the front, or why it lost."""
    keys = [OBJECTIVES[o].key for o in objectives]
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(family_of(r), []).append(r)
    on_front = {r["design"] for r in front}
    out = []
    for fam, members in groups.items():
        winners = [r for r in members if r["design"] in on_front]
        if winners:
            out.append({"family": fam, "on_front": True, "designs": [r["design"] for r in winners], "why": f"on the front: {', '.join(r['design'] for r in winners)}"})
            continue
        ok = [r for r in members if not any(breaks(c, r.get(CONSTRAINTS[c][0]), v) for c, v in constraints.items())]
        if not ok:
            broken = sorted({c for r in members for c, v in constraints.items() if breaks(c, r.get(CONSTRAINTS[c][0]), v)})
            out.append({"family": fam, "on_front": False, "designs": [], "why": f"every design breaks {', '.join(broken)}"})
            continue
        best = min(ok, key=lambda r: ([r[k] if r[k] is not None else 0 for k in keys], r["design"]))
        bv = [best[k] or 0 for k in keys]
        beaters = [f for f in front if dominates([f[k] or 0 for k in keys], bv)]
        by = beaters[0] if beaters else (front[0] if front else None)
        if by is None:
            continue
        diffs = ", ".join(f"{o} {_change(by[k], best[k])}" for o, k in zip(objectives, keys))
        est = " (closed-form estimate)" if best.get("figures") != "explicit" else ""
        if beaters:
            why = f"its best design {best['design']} ({label(best)}){est} is dominated by {by['design']}: {diffs}"
        else:  # only an estimate can get here: screened out as further behind the front than the slack
            why = f"its best design {best['design']} ({label(best)}){est} was screened out, behind the front's estimates by more than the slack; against {by['design']}: {diffs}"
        out.append({"family": fam, "on_front": False, "designs": [best["design"]], "beaten_by": by["design"], "why": why})
    return out
