"""The search, top to bottom: space → screening → near-front → explicit builds → front → choice.

:func:`search` returns a :class:`Result` of plain data (the shape of ``topogen
search --json``); it never prints. Bad input, an empty space, or constraints
nothing meets raise :class:`~topogen.errors.InputError` naming what would be valid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from topogen import __version__
from topogen.spec import catalog as cat
from topogen.util.errors import InputError, Problem
from topogen.util.figures import count, usd
from topogen.spec.cluster import available_catalogs, resolve_catalog_ref
from topogen.search import explain, front
from topogen.search.executor import Local
from topogen.search.explicit import FIGURES
from topogen.search.journal import Journal, disagreement
from topogen.search.screen import Screener
from topogen.search.simulated import simulate_design
from topogen.search.space import AT_LEAST, CONSTRAINTS, OBJECTIVES, SIMULATED, Search, breaks, points

TRIED_CHEAPEST = 3  # designs built explicitly to name the one nearest a constraint nothing meets


@dataclass
class Result:
    """What a search found: every row, the front, the chosen design, why families lost, errors."""

    search: dict[str, Any]
    rows: list[dict[str, Any]]
    front: list[dict[str, Any]]
    chosen: dict[str, Any]
    families: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    errors: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "generator": f"topogen {__version__}",
            "search": self.search,
            "rows": self.rows,
            "front": self.front,
            "chosen": self.chosen,
            "families": self.families,
            "skipped": self.skipped,
            "errors": self.errors,
            "stats": self.stats,
        }


def label(row: dict[str, Any]) -> str:
    """A design in words: ``rail-only ndr-400g K=8 radix 64 400G 1:1``."""
    planes = f" {row['planes']} planes" if row.get("planes", 1) != 1 else ""
    striping = " minimal striping" if row.get("striping") == "minimal" else ""
    pair = " leaf pair" if row.get("fabric_design") == "leaf-pair" else ""
    return f"{row['arch']} {row['catalog']} K={row['hb_domain']} N={row['gpus']:,} radix {row['radix']} {row['link_speed']}G {row['oversubscription']}{planes}{striping}{pair}"


def load_catalogs(s: Search) -> dict[str, cat.Catalog]:
    """Every catalog of the space, loaded once; unknown ones are reported with what is bundled."""
    out: dict[str, cat.Catalog] = {}
    problems: list[Problem] = []
    for ref in s.axes["catalog"]:
        if not isinstance(ref, str):
            problems.append(Problem("search.space.catalog", f"a catalog is a name or a path, got {ref!r}", f"bundled: {', '.join(available_catalogs())}"))
            continue
        try:
            out[ref] = cat.load_catalog(resolve_catalog_ref(ref, s.base_dir))
        except InputError as exc:
            problems.extend(Problem("search.space.catalog", p.render(), f"bundled catalogs: {', '.join(available_catalogs())}, or a path to a catalog .yaml file") for p in exc.problems)
    if problems:
        raise InputError(problems)
    return out


def _vector(row: dict[str, Any], objectives: tuple[str, ...]) -> list[float]:
    return [float(row[OBJECTIVES[o].key] if row[OBJECTIVES[o].key] is not None else 0.0) for o in objectives]


def _violations(row: dict[str, Any], constraints: dict[str, float], slack: float) -> list[str]:
    """The constraints ``row`` breaks (an estimate gets ``slack``; an unknown figure breaks nothing yet)."""
    return [name for name, cap in constraints.items() if breaks(name, row.get(CONSTRAINTS[name][0]), cap, slack)]


def _constraint_text(name: str, cap: float) -> str:
    key, scale, unit, what = CONSTRAINTS[name]
    if name == "budget":
        return f"the budget of {usd(cap)}"
    if name == "power_kw":
        return f"the power cap of {cap:,.6g} kW"
    if name == "racks":
        return f"the rack cap of {count(int(cap))} racks"
    if name == "max_iteration_s":
        return f"the iteration target of {cap:g} s"
    if name == "min_bus_bandwidth_GBps":
        return f"the DP ring bus bandwidth target of {cap:g} GB/s"
    if name == "min_alltoall_GBps":
        return f"the all-to-all target of {cap:g} GB/s per GPU"
    return f"the limit of {cap:g} switch hops"


def _value_text(name: str, row: dict[str, Any]) -> str:
    key, scale, unit, _ = CONSTRAINTS[name]
    v = row[key]
    if name == "budget":
        return usd(v)
    if name == "power_kw":
        return f"{v / 1000:,.1f} kW"
    if name == "max_iteration_s":
        return f"{v:.4f} s"
    if name in AT_LEAST:
        return f"{v:,.2f} GB/s"
    return f"{count(int(v))} {unit}"


def _nothing_meets(s: Search, rows: list[dict[str, Any]], build: Callable[[list[dict[str, Any]]], None]) -> InputError:
    """'Nothing meets the budget': per constraint nothing meets, the design nearest to meeting it, built explicitly."""
    problems = []
    for name, cap in s.constraints.items():
        key = CONSTRAINTS[name][0]
        sign = -1 if name in AT_LEAST else 1  # best first: the least of a cap's figure, the most of a floor's
        known = [r for r in rows if r.get(key) is not None]
        if not known:
            continue
        best = sorted(known, key=lambda r: (sign * r[key], r["design"]))[:TRIED_CHEAPEST]
        build([r for r in best if r["figures"] != "explicit"])
        best = min(best, key=lambda r: (sign * r[key], r["design"]))
        if not breaks(name, best[key], cap):
            continue
        least = {"budget": "cheapest", "power_kw": "lowest-power", "racks": "smallest", "max_hops": "flattest", "max_iteration_s": "fastest", "min_bus_bandwidth_GBps": "fastest-ring", "min_alltoall_GBps": "fastest all-to-all"}[name]
        problems.append(Problem(f"search.constraints.{name}", f"nothing meets {_constraint_text(name, cap)}: the {least} design is {best['design']} ({label(best)}) at {_value_text(name, best)}" + (" (of the designs simulated: those that met every other constraint)" if name in SIMULATED else ""), f"{'lower' if name in AT_LEAST else 'raise'} {name} to {'at most' if name in AT_LEAST else 'at least'} {_value_text(name, best)}, or widen the space"))
    if not problems:
        problems.append(Problem("search.constraints", f"no design meets all of {', '.join(_constraint_text(n, c) for n, c in s.constraints.items())} at once (each alone is met)", "relax one of them, or widen the space"))
    return InputError(problems)


def search(s: Search, executor=None, journal: Journal | None = None, progress: Callable[[str], None] | None = None) -> Result:
    """Run the search ``s``: screen every design, build the near-front explicitly, return the front and the choice."""
    step = progress or (lambda _m: None)
    executor = executor or Local(1)
    catalogs = load_catalogs(s)
    step("expanding the space")
    overrides, no_n = points(s, catalogs)
    if not overrides:
        why = "; ".join(f"{a}: {b}" for a, b in no_n[:4]) or "an axis lists no value"
        raise InputError([Problem("search.space", f"the space holds no design ({why})", "widen search.gpus (e.g. {at_least: N}: each K rounds N up to whole HB domains) or list other HB-domain sizes")])
    step(f"screening {len(overrides):,} designs by the closed form")
    screener = Screener(s, catalogs)
    rows = [screener.screen(i, o) for i, o in enumerate(overrides)]
    for r in rows:
        r["catalog"] = catalogs[r["catalog"]].name
    skipped = [{"design": r["design"], "label": label(r), "reason": r["skipped"]} for r in rows if "skipped" in r]
    skipped += [{"design": None, "label": a, "reason": b} for a, b in no_n]
    live = [r for r in rows if "skipped" not in r]
    if not live:
        reasons: dict[str, int] = {}
        for x in skipped:
            reasons[x["reason"]] = reasons.get(x["reason"], 0) + 1
        top = "; ".join(f"{why} ({n} design{'s' if n > 1 else ''})" for why, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:3])
        raise InputError([Problem("search.space", f"none of the {len(rows):,} designs of the space can be built: {top}", "change the axes named there (topogen catalogs lists what each catalog supplies)")])

    built: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    stats = {"designs": len(rows), "buildable": len(live), "built": 0, "reused": 0, "executor": executor.describe()}

    def build(todo: list[dict[str, Any]]) -> None:
        """Build rows explicitly (reusing the journal's results) and put the exact figures in them."""
        need = []
        for r in todo:
            screener.materialize(r)
            sha = r["spec_sha256"]
            why = disagreement(r, journal.done[sha]) if journal is not None and sha in journal.done else "not in the results file"
            if journal is not None and sha in journal.done and why:
                journal.refused.append(f"{r['design']} ({label(r)}): {why}; built again")
                del journal.done[sha]
            if why is None:
                _merge(r, journal.done[sha], errors)
                stats["reused"] += 1
            elif r["design"] not in built:
                need.append(r)
        if not need:
            return
        step(f"building {len(need):,} designs explicitly on {executor.describe()}")
        for i, got in executor.run([r["spec"] for r in need]):
            r = need[i]
            built[r["design"]] = got
            stats["built"] += 1
            if journal is not None and "error" not in got:
                journal.add(r["spec_sha256"], got)
            _merge(r, got, errors)

    cheap = {k: v for k, v in s.constraints.items() if k not in SIMULATED}
    wanted = tuple(CONSTRAINTS[k][0] for k in s.constraints if k in SIMULATED)
    if wanted:
        stats["simulated"] = 0

    def simulate(todo: list[dict[str, Any]]) -> None:
        """The simulated figures of the explicit builds that meet every cheap constraint (see :mod:`.simulated`)."""
        need = [r for r in todo if any(k not in r for k in wanted) and not _violations(r, cheap, 0)]
        if need:
            step(f"simulating {len(need):,} designs' collectives on their wiring")
        for r in need:
            r.update(simulate_design(r["spec"], wanted))
            stats["simulated"] += 1

    feasible = [r for r in live if not _violations(r, s.constraints, s.slack)]
    slack = [0.0 if OBJECTIVES[o].exact_in_screening else s.slack for o in s.objectives]
    excluded: set[str] = set()
    while True:  # a design built and found over a constraint leaves; the near-front is taken again without it
        cand = [r for r in feasible if r["design"] not in excluded]
        if not cand:
            raise _nothing_meets(s, [r for r in live if r["figures"] == "explicit"] if excluded else live, build)
        near = [cand[i] for i in front.near_front([_vector(r, s.objectives) for r in cand], slack)]
        build(near)
        if errors:
            return _result(s, rows, [], {}, skipped, errors, stats)
        if wanted:
            simulate(near)
        over = {r["design"] for r in near if _violations(r, s.constraints, 0)}
        if not over:
            break
        excluded |= over
    exact = near
    on = [exact[i] for i in front.non_dominated([_vector(r, s.objectives) for r in exact])]
    order = [s.choose] + [o for o in s.objectives if o != s.choose]
    on.sort(key=lambda r: ([r[OBJECTIVES[o].key] or 0 for o in order], r["design"]))
    for r in rows:
        r["on_front"] = False
    for r in on:
        r["on_front"] = True
    chosen = {k: v for k, v in on[0].items() if not k.startswith("_")}
    chosen["binding"] = binding(s, live, chosen)
    stats["near_front"] = len(near)
    stats["front"] = len(on)
    res = _result(s, rows, on, chosen, skipped, errors, stats)
    res.families = explain.families(live, on, s.objectives, s.constraints, label)
    return res


def binding(s: Search, live: list[dict[str, Any]], chosen: dict[str, Any]) -> dict[str, Any] | None:
    """The constraint that keeps the chosen design from being cheaper, or None when no constraint binds.

    Among the designs with less of the ``choose`` objective than the chosen one, the
    constraint broken by the one with the least of it (by its explicit figures when
    built, else the closed form): what a cheaper design would have to give up.
    """
    key = OBJECTIVES[s.choose].key
    mine = chosen.get(key)
    if mine is None or not s.constraints:
        return None
    below = sorted((r for r in live if r.get(key) is not None and r[key] < mine), key=lambda r: (r[key], r["design"]))
    for r in below:
        broken = _violations(r, s.constraints, 0)
        if broken:
            name = broken[0]
            return {"constraint": name, "limit": s.constraints[name], "design": r["design"], "label": label(r), s.choose: r[key], "value": r[CONSTRAINTS[name][0]],
                    "text": f"{name} binds: the cheaper {r['design']} ({label(r)}) breaks {_constraint_text(name, s.constraints[name])} at {_value_text(name, r)}"}
    return None


def _merge(row: dict[str, Any], got: dict[str, Any], errors: list[str]) -> None:
    """Put a build's figures in its row; a build that disagrees with the closed form, or fails, is an error."""
    if "error" in got:
        errors.append(f"{row['design']} ({label(row)}): the explicit build failed: {got['error']}")
        return
    if got["spec_sha256"] != row["spec_sha256"]:
        errors.append(f"{row['design']}: the build's spec hash {got['spec_sha256'][:16]} is not the screened spec's {row['spec_sha256'][:16]}")
    for key in ("tiers", "switches_per_tier", "links_per_tier"):
        if got[key] != row[key]:
            errors.append(f"{row['design']} ({label(row)}): closed form and wiring disagree on {key}: {row[key]} by the closed form, {got[key]} in the wiring")
    if not got["closed_form_agrees"]:
        errors.append(f"{row['design']} ({label(row)}): the build's summary says its wiring disagrees with the closed form (closed_form_agrees false)")
    if got["iteration_s"] != row["iteration_s"]:
        errors.append(f"{row['design']}: iteration time {got['iteration_s']} in the build, {row['iteration_s']} in screening")
    if not got["valid"]:
        errors.append(f"{row['design']} ({label(row)}): the wiring failed validation ({got['validation_errors']} errors); topogen build of its spec lists them")
    row["estimate"] = {k: row[k] for k in FIGURES if k in row}
    for k in FIGURES:
        row[k] = got[k]
    row["figures"] = "explicit"


def _result(s: Search, rows, on, chosen, skipped, errors, stats) -> Result:
    """Rows in plain data: the spec dict is kept on the front and the chosen design only."""
    keep = {r["design"] for r in on}
    out_rows = []
    for r in rows:
        x = {k: v for k, v in r.items() if not k.startswith("_") and (k != "spec" or r["design"] in keep)}
        if "skipped" not in r:
            x.setdefault("on_front", False)
        out_rows.append(x)
    fr = [{k: v for k, v in r.items() if not k.startswith("_")} for r in on]
    return Result(s.to_dict(), out_rows, fr, chosen, [], skipped, sorted(errors), stats)
