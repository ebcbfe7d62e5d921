"""How numbers read wherever a person reads them (CLI, workbook, diagrams, file headers).

One rule per kind of figure, so the same quantity reads the same everywhere:
counts with thousands separators (``131,072``), nouns that agree with them
(``1 GPU``, ``2 GPUs``), whole dollars for totals (``$5,313,840``), dollars and
cents per GPU (``$5,230.16``, ``$748.00``), power in kW with one decimal
(``70.7 kW``), shares as percentages with one decimal (``37.5%``).
"""

from __future__ import annotations

IRREGULAR = {"leaf": "leaves", "switch": "switches", "GPU(s)": "GPUs"}


def count(n: float) -> str:
    """``131,072``: a whole number with thousands separators."""
    return f"{int(n):,}"


def plural(n: float, noun: str, many: str | None = None) -> str:
    """``1 GPU``, ``8 GPUs``, ``1 leaf``, ``32 leaves``, ``1,024 cables``, ``2 tier4 switches``."""
    if int(n) == 1:
        return f"1 {noun}"
    return f"{count(n)} {many or plural_noun(noun)}"


def plural_noun(noun: str) -> str:
    """The plural of ``noun``; of its last word when it has several (``tier4 switch``: ``tier4 switches``)."""
    head, _, last = noun.rpartition(" ")
    if noun in IRREGULAR or last in IRREGULAR:
        return IRREGULAR.get(noun) or f"{head} {IRREGULAR[last]}".lstrip()
    return noun + ("es" if last.endswith(("ch", "sh", "s", "x", "z")) else "s")


def usd(x: float) -> str:
    """A total in whole dollars: ``$5,313,840``."""
    return f"${round(x):,}"


def usd_cents(x: float) -> str:
    """A unit figure (per GPU, per port) in dollars and cents: ``$5,230.16``, ``$748.00``."""
    return f"${x:,.2f}"


def kw(watts: float) -> str:
    """Power in kW with one decimal: ``70.7 kW``."""
    return f"{watts / 1000:,.1f} kW"


def pct(x: float | None) -> str:
    """A share as a percentage: ``37.5%``; ``n/a`` when undefined."""
    return "n/a" if x is None else f"{100 * x:.1f}%"
