"""How findings write ports, device lists, ratios and places: one wording for every check."""

from __future__ import annotations

from math import gcd

LIST = 8  # devices named in one message before "..."


def port_ranges(ports: list[int], prefix: str = "p") -> str:
    """``p1-p8, p17`` for a list of port numbers."""
    out = []
    ports = sorted(set(int(p) for p in ports))
    i = 0
    while i < len(ports):
        j = i
        while j + 1 < len(ports) and ports[j + 1] == ports[j] + 1:
            j += 1
        out.append(f"{prefix}{ports[i]}" if i == j else f"{prefix}{ports[i]}-{prefix}{ports[j]}")
        i = j + 1
    return ", ".join(out)


def some(names: list[str], total: int | None = None) -> str:
    """The first :data:`LIST` names, then how many there are in all."""
    total = len(names) if total is None else total
    shown = ", ".join(names[:LIST])
    return shown + (f" ... ({total} in all)" if total > LIST else "")


def ratio(down: int, up: int) -> str:
    """Downlink to uplink capacity in lowest terms: ``2:1``, ``3:0``."""
    if up == 0:
        return f"{down}:0"
    g = gcd(int(down), int(up)) or 1
    return f"{int(down) // g}:{int(up) // g}"


def ratio_text(v: float | None) -> str:
    """An oversubscription figure (``None``: a tier without uplinks) as ``2:1`` or ``1.50:1``."""
    if v is None or v != v or v == float("inf"):  # nothing up (an infinite ratio) reads as such, never a traceback
        return "no uplinks"
    if abs(v - round(v)) < 1e-9:
        return f"{int(round(v))}:1"
    if v < 1:
        return f"{v:.2f}:1 (under-subscribed)"
    return f"{v:.2f}:1"


def place(plane: int, rail: int | None) -> str:
    """``plane 0``, or ``plane 0, rail 3`` where a check works per rail."""
    return f"plane {plane}" + (f", rail {rail}" if rail is not None else "")
