"""The spec's field vocabulary below the parser: input limits, whole-number reading, shape helpers.

The parser (:mod:`topogen.spec.cluster`) and the scalable-unit fields (:mod:`topogen.spec.units`)
both read fields with these; keeping them here lets the two import one way.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from topogen.spec import counts

MAX_PLANES = 8
# Hard limits, checked before any counting or allocation: generous for real clusters
# (2^24 GPUs, radix 4,096), small enough that no input can make topogen hang.
LIMITS: dict[str, int] = {
    "gpus": 1 << 24,
    "hb_domain": 4096,
    "radix": 4096,
    "link_speed": 102_400,
    "planes": MAX_PLANES,
    "nic_ports": 2 * MAX_PLANES,
}
INT_TEXT_RE = re.compile(r"\s*([+-]?)([0-9]+)\s*", re.ASCII)
TOO_LONG = 10**30  # stands for an integer written with more digits than any limit


def as_int(raw: Any) -> int | None:
    """A whole number from YAML or a flag; ASCII digits only; more than 30 digits reads as :data:`TOO_LONG`.

    The length is checked before ``int()``: a 5,000-digit flag never reaches it.
    """
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return None  # 64.0 is not written as a whole number; reject to keep specs exact
    m = INT_TEXT_RE.fullmatch(raw) if isinstance(raw, str) else None
    if m is None:
        return None
    digits = m.group(2).lstrip("0") or "0"
    if len(digits) > 30:
        return -TOO_LONG if m.group(1) == "-" else TOO_LONG
    return int(m.group(1) + digits)


def values_shape(v: Mapping[str, Any]) -> "counts.Shape":
    """The :class:`counts.Shape` of checked field values (``radix``, the ratios and speeds parsed)."""
    radixes = v.get("tier_radix") or (v["radix"],)
    ratios = v.get("tier_oversubscription") or (v.get("oversubscription", "1:1"),)
    return counts.shape_of(tuple(radixes), ratios, v.get("tier_speed", ()))


def homes_of(homing: Any) -> int:
    """Leaves each GPU reaches in one plane: 2 when ``homing`` is dual, else 1."""
    return 2 if homing == "dual" else 1


def spec_arches(v: Mapping[str, Any]) -> tuple[str, ...]:
    """The architectures the checked field values ask for."""
    return ("rail-optimized", "rail-only") if v.get("arch", "both") == "both" else (v.get("arch"),)
