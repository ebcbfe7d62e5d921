"""Which switch's configuration causes a finding: the plan against each file, then the running fabric traced to where a fault starts.

A finding names where it is seen (a session, a GPU pair, a route); a cause names
the switch whose ``frr.conf`` makes it, in :attr:`Report.causes` as
``"<switch>: why"``. Two sources:

* **the file against the plan** (:meth:`Blame.lint`): its ASN, router-id,
  interface addresses, one neighbour per switch port with the peer's ASN, a
  ``redistribute connected`` whose route-map and prefix-list take the switch's
  loopback and GPU subnets, and ``maximum-paths`` at least the ECMP width the
  cabling gives it;
* **the running fabric**: a session down is blamed on the end with no neighbour
  for it, or on the end whose AS (as bgpd runs it) or expected peer AS differs
  from the plan (:meth:`Blame.blame_sessions`); a switch whose own loopback or
  GPU subnet is connected but missing from its BGP table advertises nothing for it
  (:meth:`Blame.check_origins`); a route missing or narrower than the cabling gives
  is blamed on the router where it first goes wrong: its next hops toward the target
  all hold the route at their width over Established sessions, it does not
  (:meth:`Blame.blame_routes`). What follows downstream of a cause is not blamed again.
"""

from __future__ import annotations

import ipaddress
import json
import re
import time

from topogen.config.emulation.checks import peer_key
from topogen.config.emulation.lab import Router, bgp_mismatches
from topogen.config.emulation.resources import run_ip

INTERFACE_RE = re.compile(r"^interface (\S+)")
ADDRESS_RE = re.compile(r"^ ip address (\S+)$")
ROUTER_ID_RE = re.compile(r"^ bgp router-id (\S+)$")
MAX_PATHS_RE = re.compile(r"^  maximum-paths ([0-9]+)$")
PREFIX_LIST_RE = re.compile(r"^ip prefix-list LOCAL seq [0-9]+ permit (\S+) (ge|le) 32$")


def config_facts(config: str) -> dict:
    """What a router's file states that the plan decides: interface addresses, router-id, maximum-paths, the LOCAL policy."""
    iface, addrs = None, {}
    facts = {"addresses": addrs, "router_id": None, "max_paths": None, "redistribute": False, "route_map": False, "prefix_list": []}
    for ln in config.splitlines():
        m = INTERFACE_RE.match(ln)
        if m:
            iface = m.group(1)
            continue
        if ln == "exit":
            iface = None
        m = ADDRESS_RE.match(ln)
        if m and iface is not None:
            addrs.setdefault(iface, []).append(m.group(1))
        m = ROUTER_ID_RE.match(ln)
        if m:
            facts["router_id"] = m.group(1)
        m = MAX_PATHS_RE.match(ln)
        if m:
            facts["max_paths"] = int(m.group(1))
        if ln == "  redistribute connected route-map LOCAL":
            facts["redistribute"] = True
        if ln == " match ip address prefix-list LOCAL":
            facts["route_map"] = True
        m = PREFIX_LIST_RE.match(ln)
        if m:
            facts["prefix_list"].append((ipaddress.ip_network(m.group(1), strict=False), m.group(2)))
    return facts


def permitted(prefix: str, entries: list) -> bool:
    """Does prefix-list LOCAL (``permit P ge|le 32`` entries) permit ``prefix``?"""
    n = ipaddress.ip_network(prefix, strict=False)
    for net, op in entries:
        if n.subnet_of(net) and n.prefixlen >= net.prefixlen and (op == "le" or n.prefixlen == 32):
            return True
    return False


class Blame:
    """The causes of :class:`~topogen.config.emulate.Emulation`'s findings (see the module docstring)."""

    def cause(self, switch: str, why: str) -> None:
        text = f"{switch}: {why}"
        if text not in self.report.causes:
            self.report.causes.append(text)

    def local_subnets(self, r: Router) -> list[str]:
        """The GPU subnets router ``r`` should advertise: those of its ports (or rail VLANs) toward sampled GPU NICs."""
        nets = []
        for h in self.lab.hosts:
            if self.router_of_port.get((h.leaf, h.leaf_port)) is r:
                net = str(ipaddress.ip_interface(h.address).network)
                if net not in nets:
                    nets.append(net)
        return nets

    # -- the file against the plan

    def lint(self) -> None:
        """Each router's file against the plan (addressing.csv and the cabling): every mismatch a failure and a cause."""
        asns = {x.name: x.asn for x in self.lab.routers}
        need = {}
        for (x, _t), (w, _) in self.paths().items():
            need[x] = max(need.get(x, 0), w)
        for r in self.lab.routers:
            problems = bgp_mismatches(r, self.lab.roles, asns) + self.plan_mismatches(r, need.get(r.name, 0))
            for t in problems[:10]:
                self.fail(f"configuration: {t}")
            for t in problems:
                self.cause(r.switch, f"configuration: {t.split(': ', 1)[1]}")

    def plan_mismatches(self, r: Router, width: int) -> list[str]:
        """Router-id, interface addresses, the LOCAL policy and maximum-paths of ``r``'s file against the plan."""
        out = []
        f = config_facts(r.config)
        lo = self.lab.loopbacks.get(r.switch, "")
        if lo and r.ports and f["router_id"] != lo.split("/")[0]:
            out.append(f"{r.name}: bgp router-id {f['router_id'] or 'missing'}, the plan gives {lo.split('/')[0]} (its loopback)")
        if lo and not r.vrf and f["addresses"].get("lo") != [lo]:  # a VRF's router: lo stays with the default one
            out.append(f"{r.name}: lo has {', '.join(f['addresses'].get('lo', [])) or 'no address'}, the plan gives {lo}")
        for p in r.ports:
            if p.address:
                got = f["addresses"].get(p.name, [])
                if got != [p.address]:
                    out.append(f"{r.name}: {p.name} (to {p.peer}:{p.peer_port}) has {', '.join(got) or 'no address'}, the plan gives {p.address}")
        if r.ports and "bgpd" in r.daemons:
            if not f["redistribute"]:
                out.append(f"{r.name}: no 'redistribute connected route-map LOCAL': it advertises neither its loopback nor its GPU subnets")
            elif not f["route_map"]:
                out.append(f"{r.name}: route-map LOCAL does not match prefix-list LOCAL: it advertises nothing")
            else:
                nets = ([lo] if lo else []) + self.local_subnets(r)
                dropped = [n for n in nets if not permitted(n, f["prefix_list"])]
                if dropped:
                    out.append(f"{r.name}: prefix-list LOCAL leaves out {', '.join(dropped[:3])}{' ...' if len(dropped) > 3 else ''}: not advertised")
            if f["max_paths"] is not None and f["max_paths"] < width:
                out.append(f"{r.name}: maximum-paths {f['max_paths']}, the cabling gives it {width} equal-cost paths")
        return out

    # -- the running fabric

    def blame_sessions(self, down: list[tuple], summary: dict[str, tuple[str, dict[str, dict]]]) -> None:
        """Each session down: the end with no neighbour for it, or the end whose running AS or expected peer AS is not the plan's."""
        for r, p, st in down:
            peer = self.router_of_port.get((p.peer, p.peer_port))
            if peer is None:
                continue
            if st is None:
                self.cause(r.switch, f"no BGP neighbour for {p.name} (to {p.peer}:{p.peer_port}) in the running bgpd")
                continue
            said = str(summary[r.name][1].get(peer_key(p), {}).get("remoteAs", ""))
            runs = summary[peer.name][0]
            if said and runs and said != runs:
                if runs != peer.asn:
                    self.cause(peer.switch, f"bgpd runs AS {runs}, the plan gives {peer.asn} (its sessions to {r.switch} and others fail)")
                else:
                    self.cause(r.switch, f"expects AS {said} from {p.peer} on {p.name}, which runs AS {runs}")
            if summary[r.name][0] and summary[r.name][0] != r.asn:
                self.cause(r.switch, f"bgpd runs AS {summary[r.name][0]}, the plan gives {r.asn}")
            elif said == runs and p.peer_address and not {r.switch, peer.switch} & set(self.report.culprits) and self.arp_failed(r, p):
                self.fail(f"cabling: {r.switch} {p.name} gets no ARP answer from {p.peer_address.split('/')[0]} ({p.peer}:{p.peer_port}): the cable on {p.name} does not end on that port (crossed or moved)")

    def origin_gaps(self) -> list[tuple[Router, list[str]]]:
        """``(router, prefixes)``: its loopback or GPU subnets connected there but missing from its own BGP table."""
        out = []
        for r in self.lab.routers:
            if not r.ports or "bgpd" not in r.daemons:
                continue
            have = self.bgp_prefixes(r)
            lo = self.lab.loopbacks.get(r.switch, "")
            nets = ([str(ipaddress.ip_interface(lo).network)] if lo and not r.vrf else []) + self.local_subnets(r)
            missing = [n for n in nets if n not in have]
            if missing:
                out.append((r, missing))
        return out

    def origins_missing(self) -> list[str]:
        return [f"{r.name} does not advertise {', '.join(m[:3])}{' ...' if len(m) > 3 else ''} (connected there, missing from its BGP table)" for r, m in self.origin_gaps()]

    def arp_failed(self, r: Router, p) -> bool:
        """Did router ``r`` ask for its peer's address on port ``p`` and get no answer (the neighbour entry FAILED or INCOMPLETE)?"""
        res = run_ip(["-n", r.ns, "-j", "neigh", "show", "dev", p.name], check=False)
        try:
            entries = json.loads(res.stdout or "[]")
        except ValueError:
            return False
        ip = p.peer_address.split("/")[0]
        return any(e.get("dst") == ip and set(e.get("state", [])) & {"FAILED", "INCOMPLETE"} for e in entries)

    def check_origins(self) -> None:
        """Every router's loopback and every leaf's GPU subnets in its own BGP table: what it does not take in, nobody learns."""
        first = self.origin_gaps()
        if first:  # confirmed on a second reading
            time.sleep(1.0)
            second = {r.name: set(m) for r, m in self.origin_gaps()}
            first = [(r, [n for n in m if n in second.get(r.name, set())]) for r, m in first]
        for r, missing in first:
            if not missing:
                continue
            self.fail(f"origin: {r.name} does not advertise {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''} (connected there, missing from its BGP table)")
            self.cause(r.switch, f"does not advertise {', '.join(missing[:3])} (its redistribute connected, route-map or prefix-list LOCAL leave them out)")

    def blame_routes(self, fib: dict[str, dict[str, int]]) -> None:
        """A route missing or narrow at a router whose next hops toward the target all hold it, over Established sessions: that router's cause."""
        paths = self.paths()
        width = {k: w for k, (w, _) in paths.items()}
        leaf_of = self.leaf_of()
        state = self.sessions()
        by_name = {r.name: r for r in self.lab.routers}
        origins_ok = {r.name: set(self.bgp_prefixes(r)) for r in self.lab.routers if r.role == "leaf"}
        wrong: dict[str, list] = {}

        def holds(y: str, t: str, net: str) -> bool:
            if y == t:
                return net in origins_ok.get(t, set())
            want = width.get((y, t))
            return want is not None and fib[y].get(net, 0) == want

        for r in self.lab.routers:
            if not r.ports or (r.role == "leaf" and not r.exits(self.lab.roles)):
                continue
            for h in self.targets(r):
                t = leaf_of.get((h.gpu, h.nic))
                if (r.name, t) not in paths:
                    continue
                want, hops = paths[(r.name, t)]
                net = str(ipaddress.ip_interface(h.address).network)
                got = fib[r.name].get(net, 0)
                if got == want or not all(holds(y, t, net) for y in hops):
                    continue
                sessions_up = all(state[r.name].get(peer_key(p)) == "Established" for p in r.ports if self.router_of_port.get((p.peer, p.peer_port)) is not None and self.router_of_port[(p.peer, p.peer_port)].name in hops)
                if not sessions_up:
                    continue  # a session down: blamed by blame_sessions
                wrong.setdefault(r.name, []).append((net, got, want, hops))
        if wrong:  # confirmed on a second reading a moment later: a BFD flap on a busy machine is no cause
            time.sleep(1.0)
            again = {name: self.leaf_routes(by_name[name]) for name in wrong}
            wrong = {name: [it for it in items if again[name].get(it[0], 0) == it[1]] for name, items in wrong.items()}
            wrong = {name: items for name, items in wrong.items() if items}
        for name, items in wrong.items():
            net, got, want, hops = items[0]
            mp = config_facts(by_name[name].config)["max_paths"]
            more = f" and {len(items) - 1} more GPU subnets" if len(items) > 1 else ""
            self.cause(by_name[name].switch, f"routes {net}{more} over fewer next hops than the cabling gives ({net}: {got} of {want}), though its next hops ({', '.join(sorted(hops)[:3])}) hold them (maximum-paths {mp})")

