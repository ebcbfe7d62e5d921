"""Cumulus Linux NVUE ``startup.yaml`` per switch, rendered from the IP/ASN plan.

The file is what ``nv config save`` writes (``/etc/nvue.d/startup.yaml``): a
list with one ``set:`` document holding

* ``system.hostname``; ``router.bgp`` (``autonomous-system``, ``router-id``
  the loopback, ``enable: on``);
* ``interface``: ``lo`` with the /32, every cabled port (``swp<n>``, a
  breakout leg ``swp<n>s<j>``, :mod:`topogen.config.ports`) with ``type:
  swp``, ``link.speed``/``mtu``/``state``, ``description`` (the peer), its
  address and, on a switch carrying several rails, ``ip.vrf: rail<r>``; a
  split cage's first port carries ``link.breakout: <k>x``. With
  ``gpu_subnet: rail`` the GPU ports are members of ``br_default`` in their
  rail's VLAN and the gateway is on ``vlan<id>``;
* ``vrf``: ``default`` and each rail's VRF with ``router.bgp``: a neighbour per
  fabric port (``remote-as`` the peer's ASN; unnumbered ports by name, ``type:
  unnumbered``), ``ipv4-unicast`` with ``redistribute connected`` through route-map
  ``LOCAL`` and ``multipaths.ebgp`` the switch's ECMP width, BFD on every neighbour;
* ``router.policy``: FRR's filter (:func:`policy`): prefix-list ``LOCAL`` of the
  loopback /32s and the GPU subnets, route-map ``LOCAL`` matching it, so the fabric /31s
  stay out of the tables as in ``frr.conf``;
* ``qos.roce``: ``enable: on``, ``mode: lossless`` (PFC on priority 3, ECN and the DSCP
  map of Cumulus's RoCE profile).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import yaml

from topogen.config.addressing import Addressing, ip_text, plan
from topogen.config.batches import Batch, batches
from topogen.config.frr import BFD_MS, BFD_MULT, _max_paths
from topogen.config.ports import end_texts, port_names
from topogen.config.scalars import int_text, yaml_scalar, yaml_strings
from topogen.fabric.view import view

MTU = 9216
ROCE = {"enable": "on", "mode": "lossless"}  # NVUE's one switch for RoCE: PFC on priority 3, ECN, the DSCP map (Cumulus's RoCE defaults)


def policy(spec) -> dict:
    """``router.policy``: FRR's ``LOCAL`` filter (:mod:`topogen.config.frr`) as NVUE objects: loopback /32s and the GPU subnets, nothing else."""
    return {
        "prefix-list": {"LOCAL": {"type": "ipv4", "rule": {"5": {"action": "permit", "match": {str(spec.loopbacks): {"min-prefix-len": 32, "max-prefix-len": 32}}}, "10": {"action": "permit", "match": {str(spec.gpus): {"max-prefix-len": 32}}}}}},
        "route-map": {"LOCAL": {"rule": {"10": {"action": {"permit": {}}, "match": {"type": "ipv4", "ip-prefix-list": "LOCAL"}}}}},
    }


def _policy_text(spec) -> str:
    """:func:`policy` as ``yaml.dump`` writes it under ``router:`` (indented 6)."""
    text = yaml.dump({"policy": policy(spec)}, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
    return "".join("      " + line + "\n" for line in text.splitlines())
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def generate(ctx, fabric) -> Iterator[tuple[int, list]]:
    """Yield ``(switch index, startup.yaml document)`` for every switch, in switch order."""
    ad, e, n, pn, addr, peer_addr, peer_desc, lo, rail_mode = end_texts(ctx, fabric)
    bfd = {"enable": "on", "detect-multiplier": BFD_MULT, "min-rx-interval": BFD_MS, "min-tx-interval": BFD_MS}
    widths = _max_paths(fabric, ad).tolist()
    for s, sw in enumerate(fabric.switches):
        sl = e.of(s)
        rows = np.arange(sl.start, sl.stop)
        names = pn.cumulus(rows)
        paths = widths[s]
        intf: dict = {"lo": {"type": "loopback", "ip": {"address": {f"{lo[s]}/32": {}}}}}
        vrfs: dict = {}
        vlans: dict = {}

        def bgp_of(vr: int) -> dict:
            key = "default" if vr < 0 else ad.vrf_name(vr)
            if key not in vrfs:
                vrfs[key] = {"router": {"bgp": {"enable": "on", "router-id": str(lo[s]), "neighbor": {}, "address-family": {"ipv4-unicast": {"enable": "on", "redistribute": {"connected": {"enable": "on", "route-map": "LOCAL"}}, "multipaths": {"ebgp": paths}}}}}}
                if vr >= 0:
                    vrfs[key]["table"] = ad.vrf_table(vr)
            return vrfs[key]["router"]["bgp"]

        for i, r in enumerate(rows.tolist()):
            name = names[i]
            vr = int(e.vrf[r])
            it: dict = {"type": "swp", "description": str(peer_desc[r]), "link": {"speed": f"{int(pn.speed[r])}G", "mtu": MTU, "state": {"up": {}}}}
            if pn.legs[r] > 1 and pn.leg[r] == 0:
                it["link"]["breakout"] = {f"{int(pn.legs[r])}x": {}}
            to_gpu = e.peer[r] < n
            if to_gpu and rail_mode:
                vid = ad.vlan_id(int(e.rail[r]))
                it["bridge"] = {"domain": {"br_default": {"access": vid}}}
                if vid not in vlans:
                    vlans[vid] = {"type": "svi", "vlan": vid, "ip": {"address": {f"{addr[r]}/{int(e.plen[r])}": {}}}}
                    if vr >= 0:
                        vlans[vid]["ip"]["vrf"] = ad.vrf_name(vr)
                intf[name] = it
                bgp_of(vr)  # the rail's VRF routes (and announces) its gateway subnet
                continue
            ip: dict = {}
            if e.plen[r] > 0:
                ip["address"] = {f"{addr[r]}/{int(e.plen[r])}": {}}
            if vr >= 0:
                ip["vrf"] = ad.vrf_name(vr)
            if ip:
                it["ip"] = ip
            intf[name] = it
            if not to_gpu:
                nb = {"remote-as": int(e.peer_asn[r]), "description": str(peer_desc[r]), "bfd": bfd}
                if e.plen[r] > 0:
                    bgp_of(vr)["neighbor"][str(peer_addr[r])] = {**nb, "type": "numbered"}
                else:
                    bgp_of(vr)["neighbor"][name] = {**nb, "type": "unnumbered"}
            else:
                bgp_of(vr)
        if not vrfs:
            bgp_of(-1)
        for vid, it in sorted(vlans.items()):
            intf[f"vlan{vid}"] = it
        doc: dict = {"system": {"hostname": sw.name}, "router": {"bgp": {"enable": "on", "autonomous-system": int(ad.asn[s]), "router-id": str(lo[s])}, "policy": policy(ad.spec)}, "interface": intf, "vrf": vrfs}
        if vlans:
            doc["bridge"] = {"domain": {"br_default": {"vlan": {str(vid): {} for vid in sorted(vlans)}}}}
        doc["qos"] = {"roce": dict(ROCE)}
        yield s, [{"set": doc}]


def _ecmp_widths(e, n: int, switches: int) -> np.ndarray:
    """:func:`topogen.config.frr._max_paths` of every switch of a batch at once: its uplinks, or its most parallel links to one switch (1 without switch peers)."""
    up = np.bincount(e.switch, weights=e.up, minlength=switches).astype(np.int64)
    fab = e.peer >= n
    key = e.switch[fab].astype(np.int64) * (int(e.peer.max()) + 1 if len(e.peer) else 1) + e.peer[fab]
    uniq, counts = np.unique(key, return_counts=True)
    parallel = np.zeros(switches, np.int64)
    np.maximum.at(parallel, uniq // (int(e.peer.max()) + 1 if len(e.peer) else 1), counts)
    has = np.bincount(e.switch[fab], minlength=switches) > 0
    return np.where(has, np.maximum(np.maximum(up, parallel), 1), 1)


class _NoAliases(_Dumper):
    """Every neighbour's ``bfd`` block written out, not as a YAML alias (``&id001``/``*id001``) of the first."""

    def ignore_aliases(self, data) -> bool:
        return True


def reference_texts(ctx, fabric) -> Iterator[tuple[int, str]]:
    """The same files through ``yaml.dump`` of :func:`generate`'s documents: slow, the definition :func:`generate_texts` must equal."""
    for s, doc in generate(ctx, fabric):
        yield s, _header(fabric, s) + yaml.dump(doc, Dumper=_NoAliases, sort_keys=False, default_flow_style=False)


def _header(fabric, s: int) -> str:
    return f"# NVUE startup.yaml of {fabric.switches[s].name} ({fabric.arch}), written by topogen\n"


def _fill(template: str, *cols) -> np.ndarray:
    """``template.format`` over columns (object array out), mapped in C."""
    return np.array(list(map(template.format, *(c.tolist() if isinstance(c, np.ndarray) else c for c in cols))), dtype=object)


def generate_texts(ctx, fabric) -> Iterator[tuple[int, str]]:
    """``(switch index, startup.yaml text)`` in switch order: :func:`reference_texts`' files, written from columns.

    Each port's interface stanza and BGP neighbour are rendered for a batch
    of switches at once (:mod:`topogen.config.batches`; format templates
    mapped over numpy columns); a switch's file joins its rows with its VRF,
    VLAN and header blocks.
    """
    ad = plan(fabric)
    v = view(fabric)
    pn = port_names(ctx, fabric, ad)
    lo = ip_text(ad.loopback)
    for b in batches(ad.ends, pn):
        yield from _batch_texts(fabric, ad, v, lo, b)


def _batch_texts(fabric, ad: Addressing, v, lo: np.ndarray, batch: Batch) -> Iterator[tuple[int, str]]:
    e, pn, first = batch.ends, batch.ports, batch.first
    n = fabric.gpus
    nsw = batch.stop - first
    rows = len(e.switch)
    allrows = np.arange(rows)
    names = yaml_strings(pn.cumulus(allrows))
    desc = yaml_strings(v.device[e.peer] + ":" + v.ports(e.peer, e.peer_port)) if rows else np.empty(0, dtype=object)
    plen_t = np.array([str(i) for i in range(33)], dtype=object)
    cidr = yaml_strings(ip_text(e.addr) + "/" + plen_t[e.plen]) if rows else np.empty(0, dtype=object)
    vrf_names = np.array([yaml_scalar(ad.vrf_name(r)) for r in range(fabric.hb_domain)] + [""], dtype=object)
    vrf_t = vrf_names[e.vrf]
    in_vrf = e.vrf >= 0
    to_gpu = e.peer < n
    numbered = e.plen > 0
    bridged = to_gpu & (ad.spec.gpu_subnet == "rail")
    speeds, speed_at = np.unique(pn.speed.astype(np.int64), return_inverse=True)
    speed_t = np.array([yaml_scalar(f"{x}G") for x in speeds.tolist()], dtype=object)[speed_at.reshape(-1)]
    split = (pn.legs > 1) & (pn.leg == 0)
    breakout = np.full(rows, "", dtype=object)
    if split.any():
        legs = np.array([yaml_scalar(f"{k}x") for k in range(int(pn.legs.max()) + 1)], dtype=object)
        breakout[split] = _fill("          breakout:\n            {}: {{}}\n", legs[pn.legs[split]])
    vid = ad.spec.vlan_base + e.rail.astype(np.int64)
    vid_t = int_text(vid)
    # the port's own stanza: bridged into its rail's VLAN, or routed (address, VRF)
    tail = np.full(rows, "", dtype=object)
    if bridged.any():
        tail[bridged] = _fill("        bridge:\n          domain:\n            br_default:\n              access: {}\n", vid_t[bridged])
    routed = ~bridged
    for has_addr, has_vrf in ((True, True), (True, False), (False, True)):
        at = np.flatnonzero(routed & (numbered == has_addr) & (in_vrf == has_vrf))
        if not len(at):
            continue
        template = "        ip:\n" + ("          address:\n            {}: {{}}\n" if has_addr else "") + ("          vrf: {}\n" if has_vrf else "")
        tail[at] = _fill(template, *([cidr[at]] if has_addr else []), *([vrf_t[at]] if has_vrf else []))
    iface = _fill(f"      {{}}:\n        type: swp\n        description: {{}}\n        link:\n          speed: {{}}\n          mtu: {MTU}\n          state:\n            up: {{{{}}}}\n{{}}{{}}", names, desc, speed_t, breakout, tail)
    # BGP neighbours: switch-facing ports, by the peer's address (or the port, unnumbered)
    nbr = np.full(rows, "", dtype=object)
    bfd = f"                bfd:\n                  enable: 'on'\n                  detect-multiplier: {BFD_MULT}\n                  min-rx-interval: {BFD_MS}\n                  min-tx-interval: {BFD_MS}\n"
    nb_key = np.where(numbered, yaml_strings(ip_text(e.peer_addr)), names) if rows else np.empty(0, dtype=object)
    for kind, sel in (("numbered", ~to_gpu & numbered), ("unnumbered", ~to_gpu & ~numbered)):
        at = np.flatnonzero(sel)
        nbr[at] = _fill(f"              {{}}:\n                remote-as: {{}}\n                description: {{}}\n{bfd}                type: {kind}\n", nb_key[at], int_text(e.peer_asn[at]), desc[at])
    # the gateway of each (switch, rail) on a bridged leaf: the rail's SVI
    gw_rows = np.zeros(0, np.int64)
    svi = np.empty(0, dtype=object)
    if bridged.any():
        g = np.flatnonzero(bridged)
        _, gw_at = np.unique(e.switch[g] * (fabric.hb_domain + 1) + e.rail[g], return_index=True)
        gw_rows = g[np.sort(gw_at)]
        vrf_line = np.where(in_vrf[gw_rows], "          vrf: " + vrf_t[gw_rows] + "\n", "")
        svi = _fill("      vlan{}:\n        type: svi\n        vlan: {}\n        ip:\n          address:\n            {}: {{}}\n{}", vid_t[gw_rows], vid_t[gw_rows], cidr[gw_rows], vrf_line)
    gw_start = np.searchsorted(e.switch[gw_rows], np.arange(nsw + 1), side="left")
    pol = _policy_text(ad.spec)
    qos = "    qos:\n      roce:\n" + "".join(f"        {k}: {yaml_scalar(v)}\n" for k, v in ROCE.items())
    widths = _ecmp_widths(e, n, nsw).tolist()
    # per switch scalars, checked for YAML once per batch
    router_ids = yaml_strings(lo[first : batch.stop]).tolist()
    hostnames = yaml_strings(np.array([fabric.switches[first + s].name for s in range(nsw)], dtype=object)).tolist()
    loopbacks = yaml_strings(lo[first : batch.stop] + "/32").tolist()
    asns = ad.asn[first : batch.stop].tolist()
    for s in range(nsw):
        sl = e.of(s)
        paths = widths[s]
        router_id = router_ids[s]
        out = [_header(fabric, first + s), f"- set:\n    system:\n      hostname: {hostnames[s]}\n    router:\n      bgp:\n        enable: 'on'\n        autonomous-system: {int(asns[s])}\n        router-id: {router_id}\n{pol}    interface:\n      lo:\n        type: loopback\n        ip:\n          address:\n            {loopbacks[s]}: {{}}\n"]
        out.extend(iface[sl].tolist())
        a, b = int(gw_start[s]), int(gw_start[s + 1])
        vids = []
        if b > a:
            order = np.argsort(vid[gw_rows[a:b]], kind="stable")
            out.extend(svi[a:b][order].tolist())
            vids = vid[gw_rows[a:b]][order].tolist()
        out.append("    vrf:\n")
        vr = e.vrf[sl]
        if len(vr) and vr.min() == vr.max():
            seen = [int(vr[0])]  # one VRF (or none) on every port: the common case, no sort
        elif len(vr):
            uniq, at = np.unique(vr, return_index=True)
            seen = uniq[np.argsort(at)].tolist()  # VRFs in the order their first port appears
        else:
            seen = [-1]
        for r in seen:
            mine = nbr[sl] if len(seen) == 1 else nbr[sl][vr == r]
            body = "".join(mine.tolist())
            out.append(
                f"      {'default' if r < 0 else vrf_names[r]}:\n        router:\n          bgp:\n            enable: 'on'\n            router-id: {router_id}\n"
                + (f"            neighbor:\n{body}" if body else "            neighbor: {}\n")
                + f"            address-family:\n              ipv4-unicast:\n                enable: 'on'\n                redistribute:\n                  connected:\n                    enable: 'on'\n                    route-map: LOCAL\n                multipaths:\n                  ebgp: {paths}\n"
                + (f"        table: {ad.vrf_table(r)}\n" if r >= 0 else "")
            )
        if vids:
            out.append("    bridge:\n      domain:\n        br_default:\n          vlan:\n" + "".join(f"            {yaml_scalar(str(x))}: {{}}\n" for x in vids))
        out.append(qos)
        yield first + s, "".join(out)
