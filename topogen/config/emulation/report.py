"""What an emulation found: counts, convergence times and failures (``failures`` empty: it routes as designed)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Report:
    """What an emulation found; ``failures`` empty means the fabric routes as designed."""

    arch: str
    switches: int
    routers: int
    gpus_total: int
    gpus_sampled: int
    cables: int
    sessions: int = 0
    sessions_up: int = 0
    pairs_reach: int = 0
    pairs_isolated: int = 0
    ecmp_checked: int = 0
    ecmp_narrowed: int = 0
    load_s: float = 0.0
    converge_s: float | None = None
    link_down: str = ""
    reconverge_down_s: float | None = None
    reconverge_up_s: float | None = None
    daemons: dict[str, int] = field(default_factory=dict)  # FRR daemon -> routers running it (what their files need)
    ecmp_by_tier: dict[str, int] = field(default_factory=dict)  # role -> routes checked at their ECMP width
    pairs_planes_apart: int = 0  # NIC pairs of two planes with no route or echo between them
    failures: list[str] = field(default_factory=list)
    causes: list[str] = field(default_factory=list)  # "<switch>: why": the switch whose configuration causes a failure

    @property
    def culprits(self) -> list[str]:
        """The switches whose configuration the findings name as a cause."""
        return sorted({c.split(":", 1)[0] for c in self.causes})

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["ok"] = self.ok
        d["culprits"] = self.culprits
        return d
