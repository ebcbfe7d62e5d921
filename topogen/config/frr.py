"""FRR ``frr.conf`` per switch: eBGP on every fabric link (RFC 7938), ECMP, BFD, a VRF per rail where rails share a switch.

Every line renders :mod:`topogen.config.addressing`; nothing here chooses an
address or an ASN. One file per switch (:func:`generate_text`); the exporter
writes ``<arch>/frr/<folder>/<switch>.conf`` (folders from
:mod:`topogen.config.paths`). What a file holds:

* ``frr defaults datacenter``, the hostname, ``ip forwarding``;
* ``lo`` with the loopback /32; each cabled port with its description (peer
  device and port) and address: a /31, nothing on an unnumbered port (IPv6
  router advertisements on instead, for BGP over link-local, RFC 5549), or with
  ``gpu_subnet: rail`` the GPU ports bridged into the rail's VLAN whose SVI
  ``vlan<id>`` holds the gateway;
* on a switch carrying several rails, ``vrf rail<r>`` per rail and every port
  of the rail in it (``interface p1 vrf rail0``); the kernel side (VRF
  devices, bridges) is the operating system's configuration;
* ``router bgp <asn>`` (and ``router bgp <asn> vrf rail<r>``): router-id the
  loopback, ``timers bgp 3 9``, ``bgp bestpath as-path multipath-relax``, one
  eBGP neighbour per switch-facing port with its peer's ASN, description and
  ``bfd profile fabric``; ``redistribute connected`` through route-map
  ``LOCAL`` (loopbacks and GPU subnets only: the fabric /31s stay out of the
  tables), ``maximum-paths`` the largest ECMP width the switch needs (its
  uplinks, or its parallel links to one neighbour);
* a BFD profile ``fabric`` (300 ms x 3).
"""

from __future__ import annotations

import numpy as np

from topogen.config.addressing import Addressing, cidr_text, ip_text, plan
from topogen.fabric.view import view

BFD_MS = 300
BFD_MULT = 3
KEEPALIVE_S, HOLD_S = 3, 9


def _end_texts(fabric, ad: Addressing, e) -> tuple[list[str], list[str]]:
    """Per switch-side end: its ``interface`` stanza and its BGP neighbour lines ("" toward a GPU).

    One ``str.format`` per end over columns gathered with numpy (a million ends in a few seconds).
    """
    v = view(fabric)
    n = fabric.gpus
    rows = len(e.switch)
    if not rows:
        return [], []
    port = v.switch_ports(e.switch, e.port).tolist()
    peer_name = list(map("{}:{}".format, v.device[e.peer].tolist(), v.ports(e.peer, e.peer_port).tolist()))
    to_gpu = e.peer < n
    vrf_tab = np.array([""] + [f" vrf {ad.vrf_name(r)}" for r in range(fabric.hb_domain)], dtype=object)
    numbered = e.plen > 0
    bridged = to_gpu & (ad.spec.gpu_subnet == "rail")
    body = np.full(rows, " ipv6 nd ra-interval 3\n no ipv6 nd suppress-ra\n", dtype=object)  # unnumbered fabric port
    body[to_gpu] = ""
    body[numbered & ~bridged] = list(map(" ip address {}\n".format, cidr_text(e.addr[numbered & ~bridged], e.plen[numbered & ~bridged]).tolist()))
    iface = list(map("interface {}{}\n description {}\n{}exit\n!\n".format, port, vrf_tab[e.vrf + 1].tolist(), peer_name, body.tolist()))
    nbr = [""] * rows
    sw = np.flatnonzero(~to_gpu)
    if len(sw):
        peer_ip = ip_text(e.peer_addr[sw]).tolist()
        num = numbered[sw].tolist()
        ports = [port[i] for i in sw.tolist()]
        key = [ip if nb else f"{p} interface" for ip, nb, p in zip(peer_ip, num, ports)]
        ident = [ip if nb else p for ip, nb, p in zip(peer_ip, num, ports)]
        names = [peer_name[i] for i in sw.tolist()]
        texts = map(" neighbor {0} remote-as {2}\n neighbor {1} description {3}\n neighbor {1} bfd profile fabric\n".format, key, ident, e.peer_asn[sw].tolist(), names)
        for i, t in zip(sw.tolist(), texts):
            nbr[i] = t
    return iface, nbr


def _max_paths(fabric, ad: Addressing) -> np.ndarray:
    """ECMP width each switch needs: its uplinks, or the most parallel links to one neighbour (at least 1)."""
    e = ad.ends
    nsw = len(fabric.switches)
    sw = e.peer >= ad.gpus
    up = np.bincount(e.switch[sw & e.up], minlength=nsw)
    pair = e.switch[sw] * (ad.gpus + nsw) + e.peer[sw]
    uniq, count = np.unique(pair, return_counts=True)
    par = np.zeros(nsw, np.int64)
    np.maximum.at(par, uniq // (ad.gpus + nsw), count)
    return np.maximum(np.maximum(up, par), 1)


def _bgp(asn: int, router_id: str, vrf: str, nbrs: str, paths: int) -> str:
    head = f"router bgp {asn}" + (f" vrf {vrf}" if vrf else "")
    return (
        f"{head}\n bgp router-id {router_id}\n no bgp ebgp-requires-policy\n no bgp network import-check\n"
        f" bgp bestpath as-path multipath-relax\n timers bgp {KEEPALIVE_S} {HOLD_S}\n"
        f"{nbrs} !\n address-family ipv4 unicast\n  redistribute connected route-map LOCAL\n"
        f"  maximum-paths {paths}\n exit-address-family\nexit\n!\n"
    )


SWITCH_CHUNK = 1024  # switches whose port texts are formatted at once (memory stays small at any size)


def generate_texts(fabric):
    """Yield ``(switch index, frr.conf text)`` for every switch, in switch order, a chunk of switches at a time."""
    ad = plan(fabric)
    n = fabric.gpus
    lo = ip_text(ad.loopback)
    spec = ad.spec
    policy = (
        f"ip prefix-list LOCAL seq 5 permit {spec.loopbacks} ge 32\n"
        f"ip prefix-list LOCAL seq 10 permit {spec.gpus} le 32\n"
        "!\nroute-map LOCAL permit 10\n match ip address prefix-list LOCAL\nexit\n!\n"
        f"bfd\n profile fabric\n  receive-interval {BFD_MS}\n  transmit-interval {BFD_MS}\n  detect-multiplier {BFD_MULT}\n exit\nexit\n!\n"
    )
    rail_mode = spec.gpu_subnet == "rail"
    paths = _max_paths(fabric, ad).tolist()
    nsw = len(fabric.switches)
    for s0 in range(0, nsw, SWITCH_CHUNK):
        s1 = min(s0 + SWITCH_CHUNK, nsw)
        e = ad.ends.switches(s0, s1)
        iface, nbr = _end_texts(fabric, ad, e)
        offsets = e.offsets.tolist()
        vrf_of = e.vrf.tolist()
        for s in range(s0, s1):
            sw = fabric.switches[s]
            a, b = offsets[s - s0], offsets[s - s0 + 1]
            asn = int(ad.asn[s])
            vrfs = ad.vrfs(s)
            out = [f"! frr.conf of {sw.name} ({sw.role}, {fabric.arch}), written by topogen\nfrr defaults datacenter\nhostname {sw.name}\nservice integrated-vtysh-config\nip forwarding\n!\n"]
            for r in vrfs:
                out.append(f"vrf {ad.vrf_name(r)}\nexit-vrf\n!\n")
            out.append(f"interface lo\n ip address {lo[s]}/32\nexit\n!\n")
            if rail_mode:
                g = a + np.flatnonzero(e.peer[a:b] < n)
                if len(g):
                    rails, first = np.unique(e.rail[g], return_index=True)
                    for r, i in zip(rails.tolist(), first.tolist()):
                        vrf = f" vrf {ad.vrf_name(r)}" if r in vrfs else ""
                        gw = ip_text(e.addr[g[i] : g[i] + 1])[0]
                        out.append(f"interface vlan{ad.vlan_id(r)}{vrf}\n description rail {r} GPU gateway\n ip address {gw}/{int(e.plen[g[i]])}\nexit\n!\n")
            out.append("".join(iface[a:b]))
            if not vrfs:
                out.append(_bgp(asn, lo[s], "", "".join(nbr[a:b]), paths[s]))
            else:
                here = vrf_of[a:b]
                if -1 in here:
                    out.append(_bgp(asn, lo[s], "", "".join(t for t, x in zip(nbr[a:b], here) if x < 0), paths[s]))
                for r in vrfs:
                    out.append(_bgp(asn, lo[s], ad.vrf_name(r), "".join(t for t, x in zip(nbr[a:b], here) if x == r), paths[s]))
            out.append(policy)
            yield s, "".join(out)
