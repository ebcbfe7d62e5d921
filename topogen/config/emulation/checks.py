"""The checks of a running fabric: BGP sessions, reachability (``ip route get`` and ICMP), rails kept apart, ECMP width."""

from __future__ import annotations

import ipaddress
import time
from typing import Callable

from topogen.config.emulation.icmp import ping_pairs
from topogen.config.emulation.lab import Host, Port, role_rank
from topogen.config.emulation.neigh import overflow_failures
from topogen.config.emulation.resources import run_ip


def peer_key(p: Port) -> str:
    """How bgpd names the session of port ``p``: the peer's address, or the port (BGP unnumbered)."""
    return p.peer_address.split("/")[0] if p.peer_address else p.name


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
        return [f"{r.name} {p.name} -> {p.peer}:{p.peer_port}: BGP {st or 'not configured'}" for r, p, st in self.down_sessions(self.sessions())]

    def down_sessions(self, state: dict[str, dict[str, str]]) -> list[tuple]:
        """``(router, port, state or None)`` of every planned session not Established."""
        down = []
        for r in self.lab.routers:
            for p in self.expected_sessions(r):
                if self._end(p.peer, p.peer_port) is None:
                    continue
                st = state[r.name].get(peer_key(p))
                if st != "Established":
                    down.append((r, p, st))
        return down

    # -- checks

    def check_sessions(self) -> None:
        summary = self.bgp_summary()
        state = {name: {p: v.get("state", "?") for p, v in peers.items()} for name, (_, peers) in summary.items()}
        found = self.down_sessions(state)
        self.blame_sessions(found, summary)
        down = [f"{r.name} {p.name} -> {p.peer}:{p.peer_port}: BGP {st or 'not configured'}" for r, p, st in found]
        total = sum(len(self.expected_sessions(r)) for r in self.lab.routers)
        self.report.sessions, self.report.sessions_up = total, total - len(down)
        for d in down[:20]:
            self.fail(d)
        if len(down) > 20:
            self.fail(f"... and {len(down) - 20} more sessions not Established")

    def pairs(self) -> tuple[list[tuple[Host, Host]], list[tuple[Host, Host]], list[tuple[Host, Host]]]:
        """(pairs that must reach, pairs of two rails that must not (rail-only), pairs of two planes that must not) among the sampled GPUs."""
        reach, apart, planes = [], [], []
        for a in self.lab.hosts:
            for b in self.lab.hosts:
                if a is b:
                    continue
                if self.lab.arch == "rail-only" and a.rail != b.rail:
                    apart.append((a, b))
                elif self.host_part(a) == self.host_part(b):
                    reach.append((a, b))
                elif self.host_part(a) >= 0 and self.host_part(b) >= 0:
                    planes.append((a, b))
        return reach, apart, planes

    def check_planes(self, pairs: list[tuple[Host, Host]]) -> None:
        """Several planes are separate networks: no switch of one plane routes to a NIC of another, and no echo crosses."""
        bad = []
        for r in self.lab.routers:
            mine = self.parts()[r.name]
            others = [h for h in self.lab.hosts if self.host_part(h) not in (mine, -1)]
            if others:
                got = self.route_get(r.ns, [h.ip for h in others])
                leaks = [h for h in others if h.ip in got]
                bad += [f"{r.name} routes to {h.gpu} {h.nic} of another plane: {got[h.ip].strip()}" for h in leaks]
                statics = [ln.split()[2] for ln in r.config.splitlines() if ln.startswith("ip route ")]
                for h in leaks:
                    net = next((n for n in statics if ipaddress.ip_address(h.ip) in ipaddress.ip_network(n, strict=False)), None)
                    if net is not None:
                        self.cause(r.switch, f"its static route {net} leads to {h.gpu} {h.nic} of another plane")
        self.report.pairs_planes_apart = self._no_echo(pairs, bad, "planes apart", lambda a, b: f"{a.gpu} {a.nic} reached {b.gpu} {b.nic} of another plane")

    def _no_echo(self, pairs: list[tuple[Host, Host]], bad: list[str], label: str, reached: Callable[[Host, Host], str]) -> int:
        """Echo once across each pair kept apart: the failures (``bad`` and every echo answered) reported, the pairs that stayed apart returned."""
        answered = ping_pairs(pairs, tries=1, wait_s=0.5)
        bad = bad + [reached(*pairs[i]) for i in sorted(answered)]
        for t in bad[:20]:
            self.fail(f"{label}: {t}")
        if len(bad) > 20:
            self.fail(f"{label}: ... and {len(bad) - 20} more")
        return len(pairs) - len(answered)

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
        if lost:
            for t in overflow_failures(self.neigh_fulls):
                self.fail(f"{label}: {t}")
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
        self.report.pairs_isolated = self._no_echo(pairs, bad, "rails apart", lambda a, b: f"{a.gpu} reached {b.gpu} of another rail")

    def check_ecmp(self) -> None:
        """Every router's routes (leaf, spine, core) to every sampled GPU at the width the cabling gives; a gap is blamed where it starts."""
        fib = self.routes()
        tally: dict[str, int] = {}
        gaps = self.full_width() + self.ecmp_gaps(fib=fib, tally=tally)
        self.report.ecmp_by_tier = dict(sorted(tally.items(), key=lambda kv: role_rank(kv[0])))
        self.report.ecmp_checked = sum(tally.values())
        for g in gaps[:20]:
            self.fail(f"ECMP: {g}")
        if len(gaps) > 20:
            self.fail(f"ECMP: ... and {len(gaps) - 20} more")
        self.blame_routes(fib)
