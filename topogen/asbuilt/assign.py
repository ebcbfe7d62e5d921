"""Name the devices a floor reports under names the plan does not know, jointly, by their wiring.

Each round scores every unnamed device ``u`` against every planned device
``q`` not yet taken: a cable of ``u`` whose far end is already known (a GPU
port, a named switch's port) agrees with ``q`` when the plan cables that far
end to ``q``; it scores 2, plus 1 when it also lands on the port the plan
gives it on ``q``. The scores form a sparse bipartite graph; each connected
part of it is solved as one assignment (the most agreeing cables in total,
:func:`scipy.optimize.linear_sum_assignment`), so two leaves that each hold a
few of the other's cables are still told apart by the rest. A pair is kept
when at least two of ``u``'s known cables agree and they are more than half of
them. The caller repeats rounds until nothing changes: GPUs name the leaves,
the leaves the spines, and so on up.

Where the scores leave a choice (an equally good assignment exists that names
two devices the other way round: two spines whose known cables agree with
both equally), the pair is still named, in a fixed order, and the choice is
returned once as a :class:`Choice`, with what would decide it, rather than as
a move order per cable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from topogen.asbuilt import End
from topogen.asbuilt.diff import _Sets

MAX_DENSE = 4_000_000  # cells of one part's score matrix solved exactly; beyond, greedily


@dataclass(frozen=True)
class Choice:
    """Devices the wiring cannot tell apart: found devices, the plan names they may take, and the order used."""

    found: tuple[str, ...]
    plan: tuple[str, ...]
    named: tuple[tuple[str, str], ...]  # (found, plan) as named
    agree: int  # cables of each that agree with either name

    def text(self) -> str:
        named = ", ".join(f"{f} as {p}" for f, p in self.named)
        if not self.agree:
            return (
                f"nothing read tells {_list(self.plan)} apart (no cable of theirs leads to a device known by name, GUID or host name): "
                f"{named} to start from, in GUID order, and the rest named by the wiring from there; what decides it: the chassis label "
                "or serial number of one of them (a --names line), or node descriptions or host names on the devices they connect"
            )
        return (
            f"no cable tells {' and '.join(self.plan)} apart: {' and '.join(self.found)} agree with each equally ({self.agree:,} cable(s)); "
            f"named in a fixed order ({named}); what decides it: a cable of one that only the other's plan has (connect one more known device), "
            "the chassis label or serial number, or a --names line"
        )

    def to_dict(self) -> dict:
        return {"found": list(self.found), "plan": list(self.plan), "named": [list(x) for x in self.named], "agree": self.agree, "text": self.text()}


@dataclass(frozen=True)
class Pick:
    """One device named by its wiring: the plan name, cables agreeing, and its known cables."""

    plan: str
    agree: int
    known: int


def _key(name: str) -> tuple:
    return (len(name), name)


def _list(names: tuple[str, ...], shown: int = 6) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown:,} more" if len(names) > shown else "")


def seed(unknown: dict[str, list[tuple[End, End]]], degree: Callable[[str], int], plan_shape: dict[str, tuple], free: set[str], order: Callable[[str], tuple] = _key) -> Choice | None:
    """When no known cable names anything left, name one device by its shape alone, and say so.

    A device's shape is its cabled ports, each with how many cables the device
    at its far end has (a leaf: GPU ports then spine ports; a spine: leaf ports
    only); ``degree`` counts a found device's cables, ``plan_shape`` holds each
    planned device's shape. The device of ``unknown`` with the most cables (first
    in ``order`` among equals) takes the first free planned device of its shape;
    every free device of that shape could have been it, which the
    :class:`Choice` says. None when no free device has its shape.
    """
    shape = {u: tuple(sorted(((e.port, degree(o.device)) for e, o in ends), key=lambda x: (len(x[0]), x))) for u, ends in unknown.items()}
    for u in sorted(unknown, key=lambda d: (-len(unknown[d]), order(d))):
        cands = sorted((q for q in free if plan_shape.get(q) == shape[u]), key=_key)
        if cands:
            alike = tuple(sorted((v for v in unknown if shape[v] == shape[u]), key=order))
            return Choice(alike, tuple(cands), ((u, cands[0]),), 0)
    return None


def assign(unknown: dict[str, list[tuple[End, End]]], resolve: Callable[[End], End | None], peer: dict[End, End], free: set[str], order: Callable[[str], tuple] = _key) -> tuple[dict[str, Pick], list[Choice]]:
    """One round: the devices of ``unknown`` (device -> (its end, the far end) per cable) named among ``free``.

    ``resolve`` gives a found end in the plan's names (None while unknown);
    ``peer`` is the plan's other end of each planned end; ``order`` sorts found
    devices (the fixed order ties are named in). Returns the picks and the choices.
    """
    score: dict[tuple[str, str], int] = {}
    agree: dict[tuple[str, str], int] = {}
    known: dict[str, int] = {}
    for u, ends in unknown.items():
        k = 0
        for mine, other in ends:
            o = resolve(other)
            if o is None:
                continue
            k += 1
            q = peer.get(o)
            if q is None or q.device not in free:
                continue
            key = (u, q.device)
            agree[key] = agree.get(key, 0) + 1
            score[key] = score.get(key, 0) + 2 + (q.port == mine.port)
        known[u] = k
    if not score:
        return {}, []
    sets = _Sets(key=lambda x: x)
    for u, q in score:
        sets.join("f" + u, "p" + q)
    parts: dict[str, tuple[set[str], set[str]]] = {}
    for u, q in score:
        rows, cols = parts.setdefault(sets.find("f" + u), (set(), set()))
        rows.add(u)
        cols.add(q)
    picks: dict[str, Pick] = {}
    choices: list[Choice] = []
    for root in sorted(parts):
        rows_set, cols_set = parts[root]
        rows, cols = sorted(rows_set, key=order), sorted(cols_set, key=_key)
        pairs = _solve(rows, cols, score)
        by_col = {q: u for u, q in pairs.items()}
        tied: dict[str, str] = {}

        def tfind(x: str) -> str:
            while tied.setdefault(x, x) != x:
                x = tied[x]
            return x

        def tjoin(*xs: str) -> None:
            roots = sorted({tfind(x) for x in xs})
            for r in roots[1:]:
                tied[r] = roots[0]

        for u, q in pairs.items():
            s = score.get((u, q), 0)
            for q2 in cols:
                if q2 == q or score.get((u, q2), 0) != s:
                    continue
                u2 = by_col.get(q2)
                if u2 is None:
                    tjoin("f" + u, "p" + q, "p" + q2)
                elif score.get((u2, q), 0) == score.get((u2, q2), 0):
                    tjoin("f" + u, "f" + u2, "p" + q, "p" + q2)
        groups: dict[str, tuple[list[str], list[str]]] = {}
        for x in list(tied):
            g = groups.setdefault(tfind(x), ([], []))
            (g[0] if x[0] == "f" else g[1]).append(x[1:])
        for g_found, g_plan in groups.values():
            g_found = [u for u in g_found if u in pairs]
            if len(g_found) + len(g_plan) < 3 or not g_found:
                continue
            named = tuple(sorted(((u, pairs[u]) for u in g_found), key=lambda x: _key(x[1])))
            plan_names = sorted(set(g_plan) | {p for _, p in named}, key=_key)
            choices.append(Choice(tuple(sorted(g_found, key=order)), tuple(plan_names), named, agree.get((named[0][0], named[0][1]), 0)))
        for u, q in pairs.items():
            a = agree.get((u, q), 0)
            if 2 * a > known[u] and (a >= 2 or len(unknown[u]) == 1):
                picks[u] = Pick(q, a, known[u])
    kept = [c for c in choices if all(u in picks for u in c.found)]
    return picks, kept


def _solve(rows: list[str], cols: list[str], score: dict[tuple[str, str], int]) -> dict[str, str]:
    """The assignment of ``rows`` to ``cols`` with the most score (pairs of score 0 dropped)."""
    if len(rows) == 1 or len(cols) == 1:
        best = max(((score.get((u, q), 0), -i, -j, u, q) for i, u in enumerate(rows) for j, q in enumerate(cols)))
        return {best[3]: best[4]} if best[0] > 0 else {}
    if len(rows) * len(cols) <= MAX_DENSE:
        from scipy.optimize import linear_sum_assignment

        m = np.zeros((len(rows), len(cols)), dtype=np.int64)
        ci = {q: j for j, q in enumerate(cols)}
        ri = {u: i for i, u in enumerate(rows)}
        for (u, q), s in score.items():
            if u in ri and q in ci:
                m[ri[u], ci[q]] = s
        r, c = linear_sum_assignment(m, maximize=True)
        return {rows[i]: cols[j] for i, j in zip(r, c) if m[i, j] > 0}
    out: dict[str, str] = {}
    taken: set[str] = set()
    rs = set(rows)
    for (u, q), s in sorted(((k, s) for k, s in score.items() if k[0] in rs), key=lambda kv: (-kv[1], _key(kv[0][0]), _key(kv[0][1]))):
        if u not in out and q not in taken:
            out[u] = q
            taken.add(q)
    return out
