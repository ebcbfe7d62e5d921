"""What validation returns: findings as data, the report that holds them, and the check catalogue.

A :class:`Finding` names a check id, a severity, the devices, ports and cables
involved, a message and a hint; a :class:`Report` holds one architecture's
findings and key figures. Presentation is in :mod:`topogen.checks.render`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from topogen import __version__

SEVERITIES = ("error", "warning", "info")
GROUPS = {
    "hygiene": (1, "port budget and cabling hygiene"),
    "tiers": (2, "tier structure"),
    "rails": (3, "rail isolation"),
    "reach": (4, "reachability"),
    "capacity": (5, "non-blocking and balanced"),
    "failure": (6, "failure impact"),
}
CHECK_IDS = (
    "hygiene.dangling",
    "hygiene.unknown-device",
    "hygiene.self-link",
    "hygiene.bad-port",
    "hygiene.port-reuse",
    "hygiene.port-budget",
    "hygiene.gpu-no-link",
    "hygiene.gpu-extra-link",
    "hygiene.speed-mismatch",
    "hygiene.link-speed",
    "hygiene.plane-mismatch",
    "hygiene.breakout-split",
    "hygiene.reserved-port",
    "tiers.adjacent",
    "tiers.unreachable",
    "tiers.count",
    "rails.cross-rail",
    "rails.leaf-alignment",
    "rails.shared-switch",
    "rails.pair-one-leaf",
    "rails.pair-split",
    "rails.pair-link",
    "reach.unlinked",
    "reach.partition",
    "capacity.oversubscription",
    "capacity.striping",
    "capacity.provisioning",
    "capacity.bisection",
    "capacity.isl",
    "failure.switch",
    "failure.link",
    "input.spec-mismatch",
    "input.foreign-switch",
)
MAX_PER_CHECK = 100  # findings kept per check id; the rest are counted, not listed


@dataclass(frozen=True, slots=True)
class Finding:
    """One result of a check: what is wrong (or notable), where, and what to do.

    ``devices`` are device names, ``ports`` ``"<device>:<port>"`` strings,
    ``cables`` the 1-based cable ids of ``cabling.csv`` (or of the file read).
    """

    check: str
    severity: str
    devices: tuple[str, ...]
    ports: tuple[str, ...]
    message: str
    hint: str = ""
    cables: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            "devices": list(self.devices),
            "ports": list(self.ports),
            "cables": list(self.cables),
            "message": self.message,
            "hint": self.hint,
        }


@dataclass
class Report:
    """Findings and key figures of one architecture's wiring."""

    arch: str
    spec: Any
    findings: list[Finding] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)  # group -> what was proved / found
    suppressed: dict[str, tuple[str, int]] = field(default_factory=dict)  # check -> (severity, count not listed)
    source: str = ""

    def count(self, severity: str) -> int:
        listed = sum(1 for f in self.findings if f.severity == severity)
        return listed + sum(n for sev, n in self.suppressed.values() if sev == severity)

    @property
    def errors(self) -> int:
        return self.count("error")

    @property
    def warnings(self) -> int:
        return self.count("warning")

    @property
    def valid(self) -> bool:
        return self.errors == 0

    def by_check(self, check: str) -> list[Finding]:
        return [f for f in self.findings if f.check == check]

    def group_status(self, group: str) -> str:
        sev = {f.severity for f in self.findings if f.check.split(".")[0] == group}
        sev |= {s for c, (s, _n) in self.suppressed.items() if c.split(".")[0] == group}
        return "error" if "error" in sev else "warning" if "warning" in sev else "pass"

    def key_figures(self) -> dict[str, Any]:
        """The figures ``summary.json`` carries under each architecture."""
        f = self.figures
        return {
            "valid": self.valid,
            "errors": self.errors,
            "warnings": self.warnings,
            "worst_case_hops": f.get("worst_case_hops"),
            "oversubscription_per_tier": f.get("oversubscription_per_tier"),
            "bisection": f.get("bisection"),
            "failure_impact": f.get("failure_impact"),
            **({"gpu_isl_oversubscription": f["gpu_isl_oversubscription"]} if "gpu_isl_oversubscription" in f else {}),  # design: leaf-pair
        }

    def to_dict(self) -> dict[str, Any]:
        """The content of ``<arch>/validation.json``."""
        spec = self.spec
        return {
            "generator": f"topogen {__version__}",
            "spec_sha256": spec.digest(),
            "spec": spec.name,
            "arch": self.arch,
            "source": self.source,
            "valid": self.valid,
            "errors": self.errors,
            "warnings": self.warnings,
            "infos": self.count("info"),
            "checks": [
                {"group": g, "number": num, "title": title, "status": self.group_status(g), "detail": self.checks.get(g, "")}
                for g, (num, title) in GROUPS.items()
            ],
            "figures": self.figures,
            "not_listed": {c: {"severity": s, "count": n} for c, (s, n) in sorted(self.suppressed.items())},
            "findings": [f.to_dict() for f in self.findings],
        }


class Ordinal:
    """Cable ids ``1, 2, ...`` by link index, without an array of them (8 bytes a cable at scale)."""

    __slots__ = ()

    def __getitem__(self, i):
        return i + 1


@dataclass(frozen=True, slots=True)
class Labels:
    """How to name cables in messages: their id and where they sit in the input file.

    ``cable[i]`` is the id of link ``i`` (:class:`Ordinal` for a generated fabric:
    link ``i`` is cable ``i + 1``); ``loc[i]`` its line (``loc_fmt``
    ``"line {}"``) or edge index (``"edges[{}]"``) in the file read; ``breakout[i]``
    the breakout cable link ``i`` is a leg of (cabling.csv's ``breakout_cable``, "" for none).
    """

    cable: np.ndarray | Ordinal
    loc: np.ndarray | None = None
    loc_fmt: str = "line {}"
    breakout: np.ndarray | None = None
