"""Model parameters that carry their value, unit, status and source.

Status marks:

- ``paper``    printed in the source;
- ``derived``  our algebra on the source;
- ``fit``      a choice that reproduces the source's published figures;
- ``user``     given by the user (spec, preset of their own, or a CLI flag);
- ``spec``     read off the cluster spec topogen builds (N, K, link speed, planes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

STATUSES = ("paper", "derived", "fit", "user", "spec")

BITS_PER_BYTE = 8
GB = 1e9  # decimal gigabyte (GB/s in every output)
SECONDS_PER_DAY = 86_400.0
SECONDS_PER_HOUR = 3_600.0


@dataclass(frozen=True, slots=True)
class Param:
    """One named model input as the outputs show it."""

    name: str
    value: Any
    unit: str
    status: str
    source: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "unit": self.unit, "status": self.status, "source": self.source}

    def render(self) -> str:
        v = _fmt(self.value)
        unit = f" {self.unit}" if self.unit else ""
        src = f" ({self.source})" if self.source else ""
        return f"{self.name} = {v}{unit} [{self.status}]{src}"


def _fmt(v: Any) -> str:
    """Readable numbers: 96, 12,288, 175e9, 989.4e12, 2.56e24, 0.25."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if abs(v) >= 1e6:
        exp = (len(str(int(abs(v)))) - 1) // 3 * 3
        mant = v / 10**exp
        return f"{mant:.4g}e{exp}"
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:,.4g}"


def gbps_to_Bps(gbps: float) -> float:
    """Gb/s (link and NVLink figures) to bytes/s (what the models use)."""
    return gbps * 1e9 / BITS_PER_BYTE


# Constants of the rail-only paper's model (Eq. 1) fitted to its published figures: Sec. 3.3/3.4 (Fig. 7 and 8).
EQ1_GRADIENT_BYTES = Param("gradient bytes per parameter (S_T = this x P / l)", 4, "bytes", "fit", "fitted to the rail-only paper's Fig. 7/8 claims (Sec. 3.3/3.4: K 32 to 64 and 512 to 1024 for GPT-3 and OPT-175B)")
EQ1_ACTIVATION_BYTES = Param("MP bytes per element (M_cc x b x d_model x this)", 4, "bytes", "fit", "fitted to the rail-only paper's Fig. 7/8 claims (Sec. 3.3/3.4: K 32 to 64 and 512 to 1024 for GPT-3 and OPT-175B)")
EQ1_FLOP_PER_PARAM_TOKEN = Param("FLOP per parameter per token (M_flop = this x P x b)", 6, "FLOP", "fit", "forward + backward (2 + 4), the count with which Eq. 1 meets the rail-only paper's Fig. 7/8 claims")


def as_dicts(params: Iterable[Param]) -> list[dict[str, Any]]:
    return [p.as_dict() for p in params]
