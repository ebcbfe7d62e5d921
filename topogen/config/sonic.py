"""SONiC ``config_db.json`` per switch, rendered from the IP/ASN plan (:mod:`topogen.config.addressing`).

Tables (keys as SONiC's ConfigDB and its YANG models name them):

* ``DEVICE_METADATA|localhost``: ``hostname``, ``bgp_asn``, ``type``
  (``LeafRouter`` for leaves, ``SpineRouter`` above), ``docker_routing_config_mode``
  ``split`` (BGP from the ``BGP_NEIGHBOR`` table, as SONiC's own fabrics).
* ``PORT``: every cabled port (:mod:`topogen.config.ports` names them
  ``Ethernet<lane>``) with ``alias`` (topogen's ``p<n>``), ``lanes``, ``speed``
  (Mb/s), ``mtu`` 9100, ``admin_status`` up and the peer in ``description``;
  ``BREAKOUT_CFG`` gives each split cage's mode (``2x200G``).
* ``LOOPBACK_INTERFACE``: ``Loopback0`` with the /32.
* ``INTERFACE``: each routed port, ``<port>|<address>/<len>``; on a shared
  switch with its rail's ``vrf_name``. Unnumbered fabric ports (BGP over IPv6
  link-local) carry ``ipv6_use_link_local_only: enable``.
* ``VRF``: ``Vrfrail<r>`` per rail on a switch carrying several rails (SONiC
  requires VRF names to start with ``Vrf``).
* ``VLAN``, ``VLAN_MEMBER``, ``VLAN_INTERFACE`` with ``gpu_subnet: rail``: the
  rail's VLAN, the GPU ports untagged in it, the gateway on ``Vlan<id>``.
* ``BGP_NEIGHBOR``: one per numbered fabric port, keyed by the peer's address
  (``Vrfrail<r>|<address>`` in a VRF): ``asn``, ``name``, ``local_addr``,
  ``holdtime``/``keepalive``, ``admin_status``. Unnumbered ports have no
  address to key by: their sessions are in ``BGP_NEIGHBOR`` keyed by port name
  (``Ethernet0``), as SONiC's unnumbered BGP support expects.
"""

from __future__ import annotations

import json
from typing import Iterator

import numpy as np

from topogen.config.addressing import Addressing, ip_text, plan
from topogen.config.batches import Batch, batches
from topogen.config.frr import HOLD_S, KEEPALIVE_S
from topogen.config.ports import end_texts, port_names
from topogen.config.scalars import int_text, json_inner
from topogen.fabric.view import view

MTU = "4200"  # RoCE: a 4096-byte RDMA MTU and its headers (NVIDIA's RoCE recommendation for Spectrum switches)
ROUTING_MODE = "split-unified"  # BGP tables and the integrated frr.conf both kept (split deletes frr.conf at start-up)
MAP = "AZURE"  # SONiC's name of its default QoS maps and profiles
LOSSLESS = 3  # the lossless priority, its traffic class and its queue
CNP = 6  # the congestion notification packets' priority (strict, lossy)
DSCP_LOSSLESS = 26  # RoCE data (NVIDIA's RoCE default DSCP)
DSCP_CNP = 48  # RoCE congestion notification packets
QUEUE_BYTES = 2 * 1024 * 1024  # ASSUMED lossless queue allotment the ECN thresholds are fractions of
ECN_MIN, ECN_MAX, ECN_DROP = 0.05, 0.80, 100  # ECN marking from 5 % to 80 % of the queue, up to probability 100 %
PFC_WD_MS = 750  # PFC watchdog: a queue paused this long is a storm; its packets are dropped, restored after as long
PFC_WD_POLL_MS = 100
LOSSLESS_PROFILE = f"{MAP}_LOSSLESS"


def qos_maps() -> dict[str, dict]:
    """The switch-wide RoCE QoS tables: DSCP to traffic class, traffic class to queue and priority group, PFC priority to queue, the ECN profile, the PFC watchdog's poll interval."""
    dscp = {str(d): "0" for d in range(64)}
    dscp[str(DSCP_LOSSLESS)], dscp[str(DSCP_CNP)] = str(LOSSLESS), str(CNP)
    same = {str(t): str(t) for t in range(8)}
    wred = {"ecn": "ecn_all", "wred_green_enable": "true", "green_min_threshold": str(round(QUEUE_BYTES * ECN_MIN)), "green_max_threshold": str(round(QUEUE_BYTES * ECN_MAX)), "green_drop_probability": str(ECN_DROP)}
    return {
        "DSCP_TO_TC_MAP": {MAP: dscp},
        "MAP_PFC_PRIORITY_TO_QUEUE": {MAP: dict(same)},
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": str(PFC_WD_POLL_MS)}},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP: dict(same)},
        "TC_TO_QUEUE_MAP": {MAP: dict(same)},
        "WRED_PROFILE": {LOSSLESS_PROFILE: wred},
    }


PORT_QOS = {"dscp_to_tc_map": MAP, "pfc_enable": str(LOSSLESS), "pfc_to_queue_map": MAP, "tc_to_pg_map": MAP, "tc_to_queue_map": MAP}
PFC_WD_PORT = {"action": "drop", "detection_time": str(PFC_WD_MS), "restoration_time": str(PFC_WD_MS)}


def _table_body(entries: dict) -> str:
    """A table's entries as ``json.dumps(indent=2, sort_keys=True)`` writes them at depth 1 (without the table's braces)."""
    return "\n".join("  " + line for line in json.dumps(entries, indent=2, sort_keys=True).split("\n")[1:-1])


_QOS_BODIES = {t: _table_body(v) for t, v in qos_maps().items()}


def vrf(rail: int) -> str:
    return f"Vrfrail{int(rail)}"


def generate(ctx, fabric) -> Iterator[tuple[int, dict]]:
    """Yield ``(switch index, config_db dict)`` for every switch, in switch order."""
    ad, e, n, pn, addr, peer_addr, peer_desc, lo, rail_mode = end_texts(ctx, fabric)
    for s, sw in enumerate(fabric.switches):
        sl = e.of(s)
        rows = np.arange(sl.start, sl.stop)
        names = pn.sonic(rows)
        lanes = pn.sonic_lanes(rows)
        shared = bool(ad.shared[s])
        meta = {"hostname": sw.name, "bgp_asn": str(int(ad.asn[s])), "type": "LeafRouter" if sw.tier == 1 else "SpineRouter", "docker_routing_config_mode": ROUTING_MODE, "hwsku": f"topogen-{sw.radix}x{int(pn.speed[rows].max()) if len(rows) else 0}G"}
        db: dict = {"DEVICE_METADATA": {"localhost": meta}, "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{lo[s]}/32": {}}}
        port, brk, intf, nbr, vlans, members, vlan_intf = {}, {}, {}, {}, {}, {}, {}
        cable, port_qos, queue, pfc_wd = {}, {}, {}, {}
        for i, r in enumerate(rows.tolist()):
            name = names[i]
            if pn.cable_m is not None:
                cable[name] = f"{int(pn.cable_m[r])}m"
            port_qos[name] = dict(PORT_QOS)
            queue[f"{name}|{LOSSLESS}"] = {"wred_profile": LOSSLESS_PROFILE}
            pfc_wd[name] = dict(PFC_WD_PORT)
            port[name] = {"alias": f"p{int(e.port[r])}", "lanes": lanes[i], "speed": str(int(pn.speed[r]) * 1000), "mtu": MTU, "admin_status": "up", "description": peer_desc[r]}
            if pn.legs[r] > 1 and pn.leg[r] == 0:
                brk[name] = {"brkout_mode": f"{int(pn.legs[r])}x{int(pn.speed[r])}G"}
            to_gpu = e.peer[r] < n
            vr = int(e.vrf[r])
            if to_gpu and rail_mode:
                vid = ad.vlan_id(int(e.rail[r]))
                vlans[f"Vlan{vid}"] = {"vlanid": str(vid)}
                members[f"Vlan{vid}|{name}"] = {"tagging_mode": "untagged"}
                if f"Vlan{vid}" not in vlan_intf:
                    vlan_intf[f"Vlan{vid}"] = {"vrf_name": vrf(vr)} if vr >= 0 else {}
                    vlan_intf[f"Vlan{vid}|{addr[r]}/{int(e.plen[r])}"] = {}
                continue
            intf[name] = {"vrf_name": vrf(vr)} if vr >= 0 else {}
            if e.plen[r] > 0:
                intf[f"{name}|{addr[r]}/{int(e.plen[r])}"] = {}
            elif not to_gpu:
                intf[name]["ipv6_use_link_local_only"] = "enable"
            if to_gpu:
                continue
            key = peer_addr[r] if e.plen[r] > 0 else name
            nb = {"asn": str(int(e.peer_asn[r])), "name": peer_desc[r], "holdtime": str(HOLD_S), "keepalive": str(KEEPALIVE_S), "admin_status": "up"}
            if e.plen[r] > 0:
                nb["local_addr"] = addr[r]
            nbr[f"{vrf(vr)}|{key}" if vr >= 0 else key] = nb
        db["PORT"] = port
        db.update(qos_maps())
        db["PFC_WD"].update(pfc_wd)
        db["PORT_QOS_MAP"], db["QUEUE"] = port_qos, queue
        if cable:
            db["CABLE_LENGTH"] = {MAP: cable}
        if brk:
            db["BREAKOUT_CFG"] = brk
        db["INTERFACE"] = intf
        if nbr:
            db["BGP_NEIGHBOR"] = nbr
        if shared:
            db["VRF"] = {vrf(r): {} for r in ad.vrfs(s)}
        if vlans:
            db["VLAN"], db["VLAN_MEMBER"], db["VLAN_INTERFACE"] = vlans, members, vlan_intf
        yield s, db


def _sorted_groups(sw: np.ndarray, key: np.ndarray, text: np.ndarray, switches: int) -> tuple[np.ndarray, np.ndarray]:
    """``text`` ordered by (switch, key as ``sort_keys`` orders strings), and each switch's start in it."""
    if not len(sw):
        return np.empty(0, dtype=object), np.zeros(switches + 1, np.int64)
    order = np.argsort(key.astype(str), kind="stable")
    order = order[np.argsort(sw[order], kind="stable")]
    return text[order], np.searchsorted(sw[order], np.arange(switches + 1), side="left")


Field = tuple[str, "np.ndarray | str", bool]  # (name, value: a column or one text for every row, quoted as a JSON string?)


def _entries(key: np.ndarray, fields: list[Field], present: list[np.ndarray | None] | None = None) -> np.ndarray:
    """Per row, ``"key": {"f": v, ...}`` indented as ``json.dumps(indent=2)`` writes a table entry (depth 1 in its table).

    ``key`` and quoted values are JSON-escaped text without their quotes
    (:func:`~topogen.config.scalars.json_inner`); ``fields`` in sorted name
    order; ``present`` (per field, a bool column or None for always) leaves a
    field out where False; a row with no field is ``"key": {}``. Rows are
    filled through one format template per combination of present fields
    (``str.format`` mapped in C, no Python step per row).
    """
    rows = len(key)
    out = np.empty(rows, dtype=object)
    if not rows:
        return out
    present = present or [None] * len(fields)
    code = np.zeros(rows, np.int64)
    for i, has in enumerate(present):
        code |= (np.ones(rows, bool) if has is None else has).astype(np.int64) << i
    for c in np.unique(code).tolist():
        at = np.flatnonzero(code == c)
        parts, cols = [], [key[at].tolist()]
        for i, (name, value, quoted) in enumerate(fields):
            if c >> i & 1:
                q = '"' if quoted else ""
                if isinstance(value, np.ndarray):
                    parts.append(f'      "{name}": {q}{{}}{q}')
                    cols.append(value[at].tolist())
                else:
                    parts.append(f'      "{name}": {q}' + value.replace("{", "{{").replace("}", "}}") + q)
        template = '    "{}": ' + ("{{\n" + ",\n".join(parts) + "\n    }}" if parts else "{{}}")
        out[at] = list(map(template.format, *cols))
    return out


def generate_texts(ctx, fabric) -> Iterator[tuple[int, str]]:
    """``(switch index, config_db.json text)``: ``json.dumps(indent=2, sort_keys=True)`` of :func:`generate`'s dict, written from columns.

    Every table entry of a batch of switches (:mod:`topogen.config.batches`)
    is rendered at once, column-wise; a switch's file only joins its entries,
    sorted as ``sort_keys`` sorts them.
    """
    ad = plan(fabric)
    v = view(fabric)
    pn = port_names(ctx, fabric, ad)
    for b in batches(ad.ends, pn):
        yield from _batch_texts(fabric, ad, v, b)


def _batch_texts(fabric, ad: Addressing, v, batch: Batch) -> Iterator[tuple[int, str]]:
    e, pn, first = batch.ends, batch.ports, batch.first
    n = fabric.gpus
    nsw = batch.stop - first
    rows = len(e.switch)
    allrows = np.arange(rows)
    names = pn.sonic(allrows)  # plain: Ethernet<n>
    plen_t = np.array([str(i) for i in range(33)], dtype=object)
    addr = ip_text(e.addr)
    cidr = addr + "/" + plen_t[e.plen] if rows else np.empty(0, dtype=object)
    peer_desc = json_inner(v.device[e.peer] + ":" + v.ports(e.peer, e.peer_port)) if rows else np.empty(0, dtype=object)
    vrf_t = np.array([vrf(r) for r in range(fabric.hb_domain)] + [""], dtype=object)[e.vrf]  # "" where -1
    in_vrf = e.vrf >= 0
    to_gpu = e.peer < n
    numbered = e.plen > 0
    bridged = to_gpu & (ad.spec.gpu_subnet == "rail")
    speed = pn.speed.astype(np.int64)
    tables: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}

    def add(table: str, sel: np.ndarray, key: np.ndarray, fields: list[Field], present: list[np.ndarray | None] | None = None) -> None:
        """Entries of ``table`` for the rows ``sel`` (a bool mask over the ends)."""
        at = np.flatnonzero(sel)
        cut = [(f, val[at] if isinstance(val, np.ndarray) else val, q) for f, val, q in fields]
        tables.setdefault(table, []).append((e.switch[at], key[at], _entries(json_inner(key[at]), cut, [None if p is None else p[at] for p in present] if present else None)))

    everyone = np.ones(rows, bool)
    add("PORT", everyone, names, [("admin_status", "up", True), ("alias", "p" + int_text(e.port), True), ("description", peer_desc, True), ("lanes", pn.sonic_lanes(allrows), True), ("mtu", MTU, True), ("speed", int_text(speed * 1000), True)])
    add("PORT_QOS_MAP", everyone, names, [(k, v, True) for k, v in PORT_QOS.items()])
    add("QUEUE", everyone, names + f"|{LOSSLESS}", [("wred_profile", LOSSLESS_PROFILE, True)])
    add("PFC_WD", everyone, names, [(k, v, True) for k, v in PFC_WD_PORT.items()])
    add("BREAKOUT_CFG", (pn.legs > 1) & (pn.leg == 0), names, [("brkout_mode", int_text(pn.legs) + "x" + int_text(speed) + "G", True)])
    add("INTERFACE", ~bridged, names, [("ipv6_use_link_local_only", "enable", True), ("vrf_name", vrf_t, True)], [~numbered & ~to_gpu, in_vrf])
    add("INTERFACE", ~bridged & numbered, names + "|" + cidr, [])
    key = np.where(numbered, ip_text(e.peer_addr), names)
    key = np.where(in_vrf, vrf_t + "|" + key, key)
    add(
        "BGP_NEIGHBOR",
        ~to_gpu,
        key,
        [("admin_status", "up", True), ("asn", int_text(e.peer_asn), True), ("holdtime", str(HOLD_S), True), ("keepalive", str(KEEPALIVE_S), True), ("local_addr", addr, True), ("name", peer_desc, True)],
        [None, None, None, None, numbered, None],
    )
    if bridged.any():
        vid_t = int_text(ad.spec.vlan_base + e.rail.astype(np.int64))
        vlan = "Vlan" + vid_t
        add("VLAN_MEMBER", bridged, vlan + "|" + names, [("tagging_mode", "untagged", True)])
        g = np.flatnonzero(bridged)
        _, gw_at = np.unique(e.switch[g] * (fabric.hb_domain + 1) + e.rail[g], return_index=True)
        gw = np.zeros(rows, bool)
        gw[g[gw_at]] = True  # the first GPU port of each (switch, rail) holds its gateway
        add("VLAN", gw, vlan, [("vlanid", vid_t, True)])
        add("VLAN_INTERFACE", gw, vlan, [("vrf_name", vrf_t, True)], [in_vrf])
        add("VLAN_INTERFACE", gw, vlan + "|" + cidr, [])
    # one-per-switch tables
    sw = [fabric.switches[i] for i in range(first, batch.stop)]
    lo = ip_text(ad.loopback[first : batch.stop])
    top = np.zeros(nsw, np.int64)
    if rows:
        has = np.flatnonzero(np.diff(e.offsets) > 0)
        top[has] = np.maximum.reduceat(speed, e.offsets[has])
    kind = np.array(["SpineRouter", "LeafRouter"], dtype=object)[np.fromiter((s.tier == 1 for s in sw), np.int64, nsw)] if nsw else np.empty(0, dtype=object)
    radix = int_text(np.fromiter((s.radix for s in sw), np.int64, nsw))
    meta = _entries(
        np.full(nsw, "localhost", dtype=object),
        [("bgp_asn", int_text(ad.asn[first : batch.stop]), True), ("docker_routing_config_mode", ROUTING_MODE, True), ("hostname", json_inner([s.name for s in sw]), True), ("hwsku", "topogen-" + radix + "x" + int_text(top) + "G", True), ("type", kind, True)],
    )
    single = {"DEVICE_METADATA": meta, "LOOPBACK_INTERFACE": '    "Loopback0": {},\n    "Loopback0|' + lo + '/32": {}' if nsw else np.empty(0, dtype=object)}
    grouped = {}
    for table, parts in tables.items():
        grouped[table] = _sorted_groups(*(np.concatenate([p[i] for p in parts]) for i in range(3)), nsw)
    if pn.cable_m is not None and rows:  # CABLE_LENGTH|AZURE: one entry, a field per port, sorted as sort_keys sorts them
        field = '      "' + json_inner(names) + '": "' + int_text(pn.cable_m) + 'm"'
        cable_text, cable_at = _sorted_groups(e.switch, names, field, nsw)
    always = {"PORT", "INTERFACE", "PORT_QOS_MAP", "QUEUE", "PFC_WD"}
    extra = ["CABLE_LENGTH"] if pn.cable_m is not None and rows else []
    order = sorted({*grouped, *single, "VRF", *_QOS_BODIES, *extra})
    for s in range(nsw):
        out = []
        for table in order:
            if table in single:
                body = single[table][s]
            elif table == "CABLE_LENGTH":
                a, b = int(cable_at[s]), int(cable_at[s + 1])
                if a == b:
                    continue
                body = f'    "{MAP}": {{\n' + ",\n".join(cable_text[a:b].tolist()) + "\n    }"
            elif table in _QOS_BODIES and table not in grouped:
                body = _QOS_BODIES[table]
            elif table == "VRF":
                if not ad.shared[first + s]:
                    continue
                body = ",\n".join(f'    "{x}": {{}}' for x in sorted(vrf(r) for r in ad.vrfs(first + s)))
            else:
                text, starts = grouped[table]
                a, b = int(starts[s]), int(starts[s + 1])
                if a == b and table not in always:
                    continue
                body = ",\n".join(text[a:b].tolist())
                if table == "PFC_WD":  # the ports' entries, then GLOBAL ("Ethernet..." sorts before it)
                    body = ",\n".join(x for x in (body, _QOS_BODIES[table]) if x)
            out.append(f'  "{table}": ' + ("{\n" + body + "\n  }" if body else "{}"))
        yield first + s, "{\n" + ",\n".join(out) + "\n}\n"


def reference_texts(ctx, fabric) -> Iterator[tuple[int, str]]:
    """The same files through ``json.dumps`` of :func:`generate`'s dicts: slow, the definition :func:`generate_texts` must equal."""
    for s, db in generate(ctx, fabric):
        yield s, json.dumps(db, indent=2, sort_keys=True) + "\n"
