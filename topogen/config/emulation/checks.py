"""The checks of a running fabric: BGP sessions, reachability (``ip route get`` and ICMP), rails kept apart, ECMP width."""

from __future__ import annotations

import ipaddress
import time
from typing import Callable

from topogen.config.emulation.icmp import ping_pairs
from topogen.config.emulation.lab import Host
from topogen.config.emulation.resources import run_ip


class Checks:
    """The checks of :class:`~topogen.config.emulate.Emulation` (each adds its failures to the report)."""

    def wait(self, what: str, done: Callable[[], list[str]]) -> tuple[float | None, list[str]]:
        """Poll ``done`` (returns what is still missing) until empty or the timeout: seconds taken, what is left."""
        t0 = time.monotonic()
        left = done()
        while left and time.monotonic() - t0 < self.timeout_s:
            time.sleep(0.2)
            left = done()
        return (None if left else time.monotonic() - t0), left

    def sessions_down(self) -> list[str]:
        state = self.sessions()
        down = []
        for r in self.lab.routers:
            for p in self.expected_sessions(r):
                if self._end(p.peer, p.peer_port) is None:
                    continue
                key = p.peer_address.split("/")[0] if p.peer_address else p.name
                st = state[r.name].get(key)
                if st != "Established":
                    down.append(f"{r.name} {p.name} -> {p.peer}:{p.peer_port}: BGP {st or 'not configured'}")
        return down

    # -- checks

    def check_sessions(self) -> None:
        down = self.sessions_down()
        total = sum(len(self.expected_sessions(r)) for r in self.lab.routers)
        self.report.sessions, self.report.sessions_up = total, total - len(down)
        for d in down[:20]:
            self.fail(d)
        if len(down) > 20:
            self.fail(f"... and {len(down) - 20} more sessions not Established")

    def pairs(self) -> tuple[list[tuple[Host, Host]], list[tuple[Host, Host]]]:
        """(pairs that must reach, pairs that must not) among the sampled GPUs; NICs of two planes are neither (separate networks)."""
        reach, apart = [], []
        for a in self.lab.hosts:
            for b in self.lab.hosts:
                if a is b:
                    continue
                if self.lab.arch == "rail-only" and a.rail != b.rail:
                    apart.append((a, b))
                elif self.host_part(a) == self.host_part(b):
                    reach.append((a, b))
        return reach, apart

    def route_get(self, ns: str, dests: list[str]) -> dict[str, str]:
        """``ip route get`` of each destination in ``ns``: dest -> the route line (absent: no route)."""
        res = run_ip(["-o", "-n", ns], "".join(f"route get {d}\n" for d in dests), check=False)
        out = {}
        for line in res.stdout.splitlines():
            parts = line.split()
            if parts and "unreachable" not in parts[:2] and "prohibit" not in parts[:2]:
                out[parts[0]] = line
        return out

    def check_reach(self, pairs: list[tuple[Host, Host]], label: str) -> None:
        by_src: dict[str, list[tuple[Host, Host]]] = {}
        for a, b in pairs:
            by_src.setdefault(a.ns, []).append((a, b))
        bad = []
        for ns, ps in by_src.items():
            got = self.route_get(ns, [b.ip for _, b in ps])
            for a, b in ps:
                line = got.get(b.ip, "")
                same_subnet = ipaddress.ip_address(b.ip) in ipaddress.ip_interface(a.address).network  # a rail subnet: the leaf's VLAN, no gateway
                want = f"dev {a.nic} " if same_subnet else f"via {a.gateway} dev {a.nic} "
                if want not in line + " " or (same_subnet and " via " in line):
                    bad.append(f"{a.gpu} {a.nic} -> {b.gpu}: ip route get gives {line.strip() or 'no route'}")
        ok = ping_pairs(pairs)
        lost = [f"{pairs[i][0].gpu} -> {pairs[i][1].gpu} ({pairs[i][1].ip}): no echo reply" for i in range(len(pairs)) if i not in ok]
        for t in (bad + lost)[:20]:
            self.fail(f"{label}: {t}")
        if len(bad) + len(lost) > 20:
            self.fail(f"{label}: ... and {len(bad) + len(lost) - 20} more")
        self.report.pairs_reach = max(self.report.pairs_reach, len(pairs) - len(set(range(len(pairs))) - ok))

    def check_apart(self, pairs: list[tuple[Host, Host]]) -> None:
        """Rail-only: no route from a GPU to another rail's GPU, neither at the GPU nor at its leaf; no echo."""
        bad = []
        by_src: dict[str, list[Host]] = {}
        for a, b in pairs:
            by_src.setdefault(a.ns, []).append(b)
        for ns, dsts in by_src.items():
            got = self.route_get(ns, [b.ip for b in dsts])
            bad += [f"{ns}: a route to {b.gpu} ({b.ip}) of another rail: {got[b.ip].strip()}" for b in dsts if b.ip in got]
        for r in self.lab.routers:
            mine = {h.rail for h in self.lab.hosts if any(p.peer == h.gpu and p.peer_port == h.nic for p in r.ports)}
            if not mine:
                continue
            others = [h for h in self.lab.hosts if h.rail not in mine]
            if others:
                got = self.route_get(r.ns, [h.ip for h in others])
                bad += [f"{r.name} (rails {sorted(mine)}) routes to {h.gpu} of rail {h.rail}: {got[h.ip].strip()}" for h in others if h.ip in got]
        answered = ping_pairs(pairs, tries=1, wait_s=0.5)
        bad += [f"{pairs[i][0].gpu} reached {pairs[i][1].gpu} of another rail" for i in sorted(answered)]
        for t in bad[:20]:
            self.fail(f"rails apart: {t}")
        self.report.pairs_isolated = len(pairs) - len(answered)

    def check_ecmp(self) -> None:
        gaps = self.full_width() + self.ecmp_gaps()
        self.report.ecmp_checked = sum(len(self.targets(r)) for r in self.lab.routers if r.role == "leaf" and r.exits(self.lab.roles))
        for g in gaps[:20]:
            self.fail(f"ECMP: {g}")
