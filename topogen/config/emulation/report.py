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
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["ok"] = self.ok
        return d
