"""The spec's optional ``spares:`` section: how many spares of each SKU the bill of materials adds.

::

    spares:
      percent: 2          # of every SKU's quantity, rounded up
      minimum: 1          # and at least this many of every SKU
      transceiver: {percent: 5, minimum: 4}   # a category's own rule (switch, transceiver, cable, nic)

A SKU's spares are ``max(minimum, ceil(quantity x percent / 100))`` under its
category's rule, else the section's; a rule of 0 % and minimum 0 gives none.
Without the section the BOM has no spares lines (as before it existed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from topogen.spec.fields import Field, names
from topogen.util.errors import Problem, check_section, show

CATEGORIES = ("switch", "transceiver", "cable", "nic")
RULE_FIELDS: tuple[Field, ...] = (
    Field("percent", "number", "Spares as a percentage of the SKU's quantity, rounded up.", default=0.0, minimum=0, example=2),
    Field("minimum", "int", "At least this many spares of the SKU.", default=0, minimum=0, example=1),
)
SPARES_FIELDS: tuple[Field, ...] = (
    *RULE_FIELDS,
    *(Field(c, "section", f"The rule for {c} SKUs, in place of the section's percent and minimum.", sub="spare_rule") for c in CATEGORIES),
)
KEYS = names(SPARES_FIELDS)
RULE_KEYS = names(RULE_FIELDS)
MAX_PERCENT = 1000.0


@dataclass(frozen=True, slots=True)
class SpareRule:
    percent: float = 0.0
    minimum: int = 0

    def spares(self, quantity: int) -> int:
        """Spares of a SKU of ``quantity`` units: ``max(minimum, ceil(quantity x percent / 100))`` (none of a SKU not used)."""
        if quantity <= 0:
            return 0
        return max(self.minimum, math.ceil(round(quantity * self.percent / 100.0, 9)))


@dataclass(frozen=True, slots=True)
class SparesSpec:
    """The resolved section: a default rule and one per category (unset categories take the default)."""

    percent: float = 0.0
    minimum: int = 0
    switch: SpareRule | None = None
    transceiver: SpareRule | None = None
    cable: SpareRule | None = None
    nic: SpareRule | None = None

    def rule(self, category: str) -> SpareRule:
        own = getattr(self, category, None) if category in CATEGORIES else None
        return own if own is not None else SpareRule(self.percent, self.minimum)


def _rule(raw: Any, path: str, problems: list[Problem]) -> tuple[float, int] | None:
    if not check_section(raw, RULE_KEYS, path, problems):
        return None
    n0 = len(problems)
    pct = raw.get("percent", 0.0)
    if isinstance(pct, bool) or not isinstance(pct, (int, float)) or not 0 <= pct <= MAX_PERCENT or pct != pct:
        problems.append(Problem(f"{path}.percent", f"percent must be a number from 0 to {MAX_PERCENT:g}, got {show(pct)}", "e.g. percent: 2 (2 % of each SKU, rounded up)"))
    mn = raw.get("minimum", 0)
    if isinstance(mn, bool) or not isinstance(mn, int) or not 0 <= mn <= 1_000_000:
        problems.append(Problem(f"{path}.minimum", f"minimum must be a whole number from 0 to 1,000,000, got {show(mn)}", "e.g. minimum: 1 (at least one spare of each SKU)"))
    return None if len(problems) > n0 else (float(pct), int(mn))


def parse_spares(raw: Any, problems: list[Problem], path: str = "spares") -> SparesSpec | None:
    """The ``spares:`` mapping -> :class:`SparesSpec`; None when absent; every problem named by its path."""
    if raw is None:
        return None
    if not check_section(raw, KEYS, path, problems):
        return None
    base = _rule({k: raw[k] for k in RULE_KEYS if k in raw}, path, problems)
    cats = {}
    for c in CATEGORIES:
        if raw.get(c) is not None:
            got = _rule(raw[c], f"{path}.{c}", problems)
            if got is not None:
                cats[c] = SpareRule(*got)
    if base is None:
        return None
    return SparesSpec(base[0], base[1], **cats)
