"""The results file: explicit builds appended as they finish, so an interrupted search resumes.

A JSON-lines file: a header line ``{"topogen_search_results": 1}``, then one line
per finished build ``{"spec_sha256", "generator", "figures"}``. A rerun with the
same file reuses every result of the same topogen version and spec hash and builds
only the rest. A file that is not such a journal is refused (exit 2), never
overwritten; a last line cut by a crash is ignored.

A line is trusted only after it is checked (:func:`entry_problem`: the shape, types
and sums of its figures; :func:`disagreement`: the spec hash the screened design's,
recomputed from its spec, and the figures the closed form gives exactly equal, cost
and power near the estimates). A line that fails is not reused: its design is built
again, and the run notes the line (``Journal.refused``).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

from topogen import __version__
from topogen.search.explicit import FIGURES
from topogen.util.errors import InputError, Problem

HEADER = {"topogen_search_results": 1}
MAX_BYTES = 1 << 30
SHA_RE = re.compile(r"[0-9a-f]{64}", re.ASCII)
INTS = ("tiers", "switches", "links", "transceivers", "cables", "cables_optics", "blast_radius_gpus", "validation_errors")
NUMBERS = ("cost_usd", "cost_per_gpu", "power_w")
TOLERANCE = 0.25  # a reused cost or power more than this fraction off the screened estimate is not trusted


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << 53


def _amount(v: Any) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return 0 <= v < 1e18 and (isinstance(v, int) or math.isfinite(v))  # a 400-digit int compares, never converts


def entry_problem(entry: Any) -> str | None:
    """Why a results line cannot be trusted as a build's figures (None: it is well formed and self-consistent).

    Shape and types of every figure :mod:`topogen.search.explicit` writes, counts
    whole and non-negative, amounts finite and non-negative, the sums that hold in
    every build (switches and links per tier add up, cables plus transceivers), and
    the spec hash the same inside and outside the figures.
    """
    if not isinstance(entry, dict):
        return "not a JSON object"
    sha, fig = entry.get("spec_sha256"), entry.get("figures")
    if not isinstance(sha, str) or not SHA_RE.fullmatch(sha):
        return "spec_sha256 is not a SHA-256 hex digest"
    if not isinstance(fig, dict):
        return "figures is not a mapping"
    missing = [k for k in FIGURES + ("spec_sha256", "valid", "closed_form_agrees") if k not in fig]
    if missing:
        return f"figures lack {', '.join(missing[:5])}"
    if fig["spec_sha256"] != sha:
        return "the figures' spec hash is not the line's"
    bad = [k for k in INTS if not _count(fig[k])] + [k for k in NUMBERS if not _amount(fig[k])]
    bad += [k for k in ("valid", "closed_form_agrees") if not isinstance(fig[k], bool)]
    bad += [k for k in ("switches_per_tier", "links_per_tier") if not isinstance(fig[k], list) or len(fig[k]) > 16 or not all(_count(x) for x in fig[k])]
    bad += [k for k in ("switch_hops", "racks") if fig[k] is not None and not _count(fig[k])]
    bad += [k for k in ("iteration_s",) if fig[k] is not None and not _amount(fig[k])]
    if bad:
        return f"{', '.join(bad[:5])} not a valid figure"
    if fig["tiers"] != len(fig["switches_per_tier"]) or sum(fig["switches_per_tier"]) != fig["switches"] or sum(fig["links_per_tier"]) != fig["links"]:
        return "its tiers, switches and links do not add up"
    if fig["cables_optics"] != fig["cables"] + fig["transceivers"]:
        return "cables_optics is not cables + transceivers"
    return None


def disagreement(row: dict[str, Any], fig: dict[str, Any]) -> str | None:
    """Why a results line's figures cannot be the build of the screened design ``row`` (None: consistent).

    The closed form gives tiers, switches and links per tier, and the iteration time
    exactly: a reused line must carry those; its cost and power must lie within
    :data:`TOLERANCE` of the screened estimates (a forged price lands nowhere near).
    """
    for k in ("tiers", "switches_per_tier", "links_per_tier", "iteration_s"):
        if row.get(k) != fig[k]:
            return f"{k} {fig[k]} is not the closed form's {row.get(k)}"
    for k in ("cost_usd", "power_w"):
        est = row.get(k)
        if isinstance(est, (int, float)) and est > 0 and abs(fig[k] - est) > TOLERANCE * est:
            return f"{k} {fig[k]:,} is far from the screened estimate {est:,.0f}"
    return None


class Journal:
    """An append-only results file (see the module doc)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.done: dict[str, dict[str, Any]] = {}
        self.refused: list[str] = []  # "line N: why" of lines not trusted (their designs are built again)
        self._fh = None
        self._read()

    def _refuse(self, why: str) -> InputError:
        return InputError([Problem("results", f"{str(self.path)!r} {why}", "give a new file name, or a results file an earlier topogen search wrote")])

    def _read(self) -> None:
        p = self.path
        if not os.path.lexists(p):
            parent = p.parent if str(p.parent) else Path(".")
            if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
                raise self._refuse(f"cannot be created: {str(parent)!r} is not a writable directory")
            return
        if not p.is_file() or p.is_symlink():
            raise self._refuse("is not a regular file")
        if p.stat().st_size > MAX_BYTES:
            raise self._refuse(f"is larger than {MAX_BYTES >> 20} MiB")
        if p.stat().st_size == 0:
            return
        with open(p, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        try:
            head = json.loads(lines[0])
        except ValueError:
            head = None
        if head != HEADER:
            raise self._refuse("is not a topogen search results file (its first line is not the header)")
        generator = f"topogen {__version__}"
        last = len(lines) - 1 if lines[-1] else len(lines) - 2
        for i, line in enumerate(lines[1:], 2):
            if not line:
                continue
            try:
                entry = json.loads(line)
            except (ValueError, RecursionError):
                if i - 1 != last:  # the last line may be cut by a crash; any other is damage
                    self.refused.append(f"line {i}: not a JSON object")
                continue
            if isinstance(entry, dict) and entry.get("generator") != generator:
                continue  # another topogen's result: not reused, as documented
            why = entry_problem(entry)
            if why:
                self.refused.append(f"line {i}: {why}")
                continue
            self.done[entry["spec_sha256"]] = entry["figures"]

    def add(self, spec_sha256: str, figures: dict[str, Any]) -> None:
        """Append one finished build (flushed at once: a crash loses at most the line being written)."""
        if self._fh is None:
            new = not self.path.exists() or self.path.stat().st_size == 0
            self._fh = open(self.path, "a", encoding="utf-8")
            if new:
                self._fh.write(json.dumps(HEADER) + "\n")
        self._fh.write(json.dumps({"spec_sha256": spec_sha256, "generator": f"topogen {__version__}", "figures": figures}, sort_keys=True) + "\n")
        self._fh.flush()
        self.done[spec_sha256] = figures

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
