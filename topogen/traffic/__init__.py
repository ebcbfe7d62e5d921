"""Traffic on the wiring: the training's collectives routed over the explicit fabric, at max-min fair rates.

The phases, in order (:func:`study` runs them):

1. :mod:`.source`: the fabric of each architecture (generated from a spec,
   read from a build or a cabling.csv, or found on the floor);
2. :mod:`.failures`: devices and cables taken out;
3. :mod:`.network`: directed links and capacities (cables at their speed, the
   HB domain at ``hb_bandwidth``), and which leaves each switch reaches;
4. :mod:`.patterns` / :mod:`.alltoall`: GPU pairs of the collective;
5. :mod:`.flows` and :mod:`.routing`: pairs to flows (NIC ports, queue pairs,
   the HB-domain relay of rail-only) and their links (spray, ecmp, dmodk);
6. :mod:`.rates`: max-min fair rates by progressive filling;
7. :mod:`.report`: rows (``--json``) and text.
"""

from __future__ import annotations

from typing import Any, Callable

from topogen.traffic import lft
from topogen.traffic.failures import Failure, check
from topogen.traffic.patterns import Pattern, Pairs
from topogen.traffic.report import row
from topogen.traffic.simulate import run


def study(fabrics: list, patterns: list[Pattern], routings: list[str], hb_gbps: float | None, failure: Failure | None = None, size_bytes: float | None = None, flows_per_pair: int = 1, key: int = 0, matrices: dict[str, Pairs] | None = None, routes: Callable | None = None, progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Rows of every architecture x pattern x routing, intact and (when given) with ``failure``.

    ``routes(fabric, choice)`` gives OpenSM's forwarding tables for an
    ``opensm`` routing (:mod:`topogen.exports.infiniband.opensm_routes` runs the tools);
    an intact fabric's tables are computed once for every pattern. ``progress(text)``
    hears each run start (``ring-allreduce, spray, rail-only``; :func:`runs` of them).
    """
    rows = []
    if routes is not None:
        routes = _once(routes)
    lacking = check(fabrics, failure) if failure else {}
    for pattern in patterns:
        for routing in routings:
            for fabric in fabrics:
                mat = (matrices or {}).get(pattern.label)
                size = size_bytes if size_bytes is not None or mat is None else mat.bytes_max  # a matrix says its bytes
                if progress is not None:
                    progress(f"{pattern.label}, {routing}, {fabric.arch}")
                intact = row(run(fabric, pattern, routing, hb_gbps, flows_per_pair, key, None, mat, routes=routes), size)
                rows.append(intact)
                skip = tuple(lacking.get(fabric.arch, ()))
                if failure and len(skip) == len(failure.names) and not failure.random_pct:
                    intact["notes"].append(f"no failure case: {', '.join(skip[:4])} name(s) nothing in the {fabric.arch} fabric")
                elif failure:
                    if progress is not None:
                        progress(f"{pattern.label}, {routing}, {fabric.arch}, failed")
                    res = run(fabric, pattern, routing, hb_gbps, flows_per_pair, key, failure, mat, skip=skip, routes=routes)
                    rows.append(row(res, size, intact))
                    if skip:
                        rows[-1]["notes"].append(f"not in the {fabric.arch} fabric, so not failed: {', '.join(skip[:4])}")
    return rows


def runs(fabrics: list, patterns: list, routings: list, failure: Failure | None = None) -> int:
    """How many times :func:`study` calls ``progress`` (at most: a failure naming nothing in a fabric skips its run)."""
    return len(fabrics) * len(patterns) * len(routings) * (2 if failure else 1)


def _once(routes: Callable) -> Callable:
    """``routes`` remembering its tables per (fabric, choice) for the life of one study."""
    memo: dict = {}

    def cached(fabric, choice: lft.Choice) -> lft.Tables:
        k = (id(fabric), choice)
        if k not in memo:
            memo[k] = (fabric, routes(fabric, choice))  # the fabric is kept, so its id is not reused
        return memo[k][1]

    return cached
