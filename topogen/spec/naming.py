"""The spec's optional ``naming:`` section: the site's own names for hosts, GPUs, NIC interfaces and switches.

::

    naming:
      site: sjc1
      host: "{site}-su{su+1:02}-dgx{index+1:03}"    # compute nodes
      gpu: "{host}-gpu{local}"                      # GPUs ({host} is the node's name)
      interface: "gpu{rank}np{port}"                # a GPU NIC port's Linux interface on its node
      leaf: "{site}-p{plane}-leaf{group:02}-r{rail}"
      spine: "{site}-p{plane}-spine{index:03}"

A template is text with fields in braces: ``{field}``, ``{field:03}`` (zero-padded to 3
digits) and ``{field+1:03}`` (counted from 1). Every field is a whole number counted
from 0, except ``{site}`` (the section's ``site``) and ``{host}`` (in ``gpu``: the name the
``host`` template gives the GPU's node). Without the section, or without a key, the
names are topogen's own (``hb03``, ``hb0003-gpu7``, ``gpu7-nic0``, ``leaf-g00-r0``,
see :mod:`topogen.fabric.naming`).

The names a template makes are checked when the spec is read (hosts and GPUs) or the
fabric is built (switches): every one unique, and within the limits of what consumes
it: a host or switch name is a DNS label (lower-case letters, digits, ``-``, at most 63
characters: the hostname, Slurm and NetBox names), a GPU name at most 64 characters
(NetBox), a NIC interface a Linux interface name (at most 15 characters).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from topogen.spec.fields import Field, names
from topogen.util.errors import Problem, check_section, show

SITE_RE = re.compile(r"[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?", re.ASCII)
FIELD_RE = re.compile(r"([a-z]{1,12})(?:\+([0-9]{1,6}))?", re.ASCII)
SPEC_RE = re.compile(r"0([1-9])", re.ASCII)  # {x:03}: zero padding to 1..9 digits
LABEL_CHARS = re.compile(r"[a-z0-9-]*", re.ASCII)
IFACE_CHARS = re.compile(r"[A-Za-z0-9_-]*", re.ASCII)  # Linux allows more; these need no quoting in netplan or a shell
MAX_TEMPLATE = 200

SWITCH_ROLES = ("leaf", "spine", "core", "tier4", "tier5", "tier6")  # compute fabric tiers, leaf first (topogen.fabric.clos.tier_role)

# the fields each template may use (beside {site}); what each means is in FIELD_DOCS
HOST_FIELDS = ("domain", "slot", "index", "su")
GPU_FIELDS = ("domain", "rank", "index", "node", "slot", "local", "su", "host")
INTERFACE_FIELDS = ("rank", "local", "port", "plane", "home")
SWITCH_FIELDS = ("plane", "group", "pos", "index", "rail", "home")
FIELD_DOCS = {
    "site": "the section's site",
    "domain": "HB (NVLink) domain",
    "slot": "node within its HB domain",
    "index": "the device's number among its kind (hosts: node; GPUs: GPU id; switches: within its tier and plane)",
    "su": "scalable unit (scalable_unit nodes each; 0 without scalable_unit)",
    "rank": "GPU rank in its HB domain (= its rail)",
    "node": "the GPU's node (its host's index)",
    "local": "GPU on its node",
    "host": "the host template's name of the GPU's node",
    "port": "NIC port of the GPU (0 .. nic_ports-1)",
    "plane": "fabric plane",
    "home": "leaf of a dual-homed pair (0, 1; 0 without homing: dual)",
    "group": "leaves: the leaf group (SU); upper tiers: the block",
    "pos": "position within the group or block",
    "rail": "first rail the switch serves (0 where it serves every rail)",
    "pair": "an MLAG leaf pair (bonded in-band leaves; else the switch's index)",
    "side": "the leaf of its MLAG pair (0, 1; 0 without pairs)",
    "rack": "PDUs: the compute (or management) rack, counted from 0",
    "row": "racks: the row of the hall, from 0",
    "col": "racks: the position in its row, from 0",
}
# the storage, in-band and OOB networks' switches: <network>_<role> (topogen.fabric.networks)
NETWORK_ROLES = ("storage_leaf", "storage_target_leaf", "storage_spine", "storage_super_spine", "inband_leaf", "inband_management_leaf", "inband_spine", "inband_super_spine", "oob_access")
NETWORK_FIELDS = ("index", "group", "pair", "side")
PDU_FIELDS = ("rack", "index")
RACK_FIELDS = ("row", "col", "index")
KEY_FIELDS: dict[str, tuple[str, ...]] = {
    "host": HOST_FIELDS,
    "gpu": GPU_FIELDS,
    "interface": INTERFACE_FIELDS,
    **{r: SWITCH_FIELDS for r in SWITCH_ROLES},
    **{r: NETWORK_FIELDS for r in NETWORK_ROLES},
    "pdu": PDU_FIELDS,
    "management_pdu": PDU_FIELDS,
    "rack": RACK_FIELDS,
}

NAMING_FIELDS: tuple[Field, ...] = (
    Field("site", "text", "The site's short name, the {site} field of every template: lower-case letters, digits and '-', at most 32.", default_doc="none", example="sjc1"),
    Field("host", "text", f"Compute nodes (NetBox devices, Slurm nodes, hostnames). Fields: {', '.join(HOST_FIELDS)}.", default_doc="hb<domain>, or hb<domain>-n<slot> with several nodes a domain", example="{site}-dgx{index+1:03}"),
    Field("gpu", "text", f"GPUs (cabling, diagrams, simulate --fail). Fields: {', '.join(GPU_FIELDS)}.", default_doc="hb<domain>-gpu<rank>", example="{host}-gpu{local}"),
    Field("interface", "text", f"A GPU NIC port's interface on its node (NetBox, netplan), a Linux name of at most 15 characters. Fields: {', '.join(INTERFACE_FIELDS)}.", default_doc="gpu<rank>-nic<port>", example="gpu{rank}np{port}"),
    *(Field(r, "text", f"Compute fabric {r} switches. Fields: {', '.join(SWITCH_FIELDS)}.", default_doc="topogen's (leaf-g00-r0, spine-b0-00, core-00; rail<r>- and pl<p>- prefixes)", example="{site}-p{plane}-" + r + "{index:03}") for r in SWITCH_ROLES),
    *(Field(r, "text", f"The {r.split('_', 1)[0]} network's {r.split('_', 1)[1].replace('_', '-')} switches. Fields: {', '.join(NETWORK_FIELDS)} (group: the SU or node group it serves, 0 for shared switches).", default_doc="topogen's (stor-leaf-su00-p0, inb-leaf-00a, oob-su00-0...)", example="{site}-" + r.replace("_", "-") + "{index:02}") for r in NETWORK_ROLES),
    Field("pdu", "text", f"PDUs of the compute racks. Fields: {', '.join(PDU_FIELDS)}.", default_doc="pdu-c<rack>-<i>", example="{site}-pdu{rack:03}-{index}"),
    Field("management_pdu", "text", f"PDUs of the management racks. Fields: {', '.join(PDU_FIELDS)}.", default_doc="pdu-m<rack>-<i>", example="{site}-mpdu{rack:02}-{index}"),
    Field("rack", "text", f"Racks (NetBox racks, cable labels, elevations). Fields: {', '.join(RACK_FIELDS)}.", default_doc="<row letter><position>: A01, B12", example="{site}-r{row+1:02}-k{col+1:02}"),
)
KEYS = names(NAMING_FIELDS)


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of a template: literal text, or a field with an offset and a zero-padded width."""

    text: str = ""
    field: str = ""
    offset: int = 0
    width: int = 0


@dataclass(frozen=True, slots=True)
class Template:
    """A compiled naming template: format one name, many (vectorised), or parse one back."""

    key: str  # the spec path, e.g. naming.host
    text: str
    parts: tuple[Part, ...]
    regex: re.Pattern = field(compare=False, hash=False, repr=False)

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(p.field for p in self.parts if p.field)

    def format(self, **values: int) -> str:
        """The name for one set of field values."""
        out = []
        for p in self.parts:
            if not p.field:
                out.append(p.text)
            else:
                out.append(f"{int(values[p.field]) + p.offset:0{p.width}d}")
        return "".join(out)

    def many(self, values: Mapping[str, np.ndarray], n: int) -> np.ndarray:
        """``n`` names at once, each field an array (or a scalar) of ``n`` values: a numpy unicode array."""
        out = np.full(n, "", dtype="<U1")
        for p in self.parts:
            if not p.field:
                piece: Any = p.text
            else:
                v = np.broadcast_to(np.asarray(values[p.field], dtype=np.int64) + p.offset, (n,))
                piece = v.astype(str)
                if p.width:
                    piece = np.char.zfill(piece, p.width)
            out = np.char.add(out, piece)
        return out

    def byte_fields(self, values: Mapping[str, np.ndarray], zdigits) -> list:
        """The names as :func:`topogen.exports.workbook.stream.assemble` fields: literal bytes and digit matrices."""
        return [p.text.encode() if not p.field else zdigits(np.asarray(values[p.field], np.int64) + p.offset, p.width) for p in self.parts]

    def parse(self, name: str) -> dict[str, int] | None:
        """The field values of a name this template makes, or None (the name is formatted back to check)."""
        m = self.regex.fullmatch(name)
        if m is None:
            return None
        values: dict[str, int] = {}
        for p, g in zip((p for p in self.parts if p.field), m.groups()):
            v = int(g) - p.offset
            if v < 0 or values.setdefault(p.field, v) != v:
                return None
        return values if self.format(**values) == name else None


def compile_template(key: str, text: str, allowed: tuple[str, ...], site: str | None, inline: Mapping[str, tuple[Part, ...]] | None = None) -> Template | Problem:
    """``text`` -> a :class:`Template` (``{site}`` and inlined templates substituted), or the Problem with it."""
    valid = ("site", *allowed)
    hint = f"valid fields: {', '.join('{' + f + '}' for f in valid)}; written {{field}}, {{field:03}} (zero-padded) or {{field+1:03}} (counted from 1)"
    if not isinstance(text, str) or not text or len(text) > MAX_TEMPLATE:
        return Problem(key, f"{key.rsplit('.', 1)[-1]} must be a template text of 1 to {MAX_TEMPLATE} characters, got {show(text)}", hint)
    parts: list[Part] = []
    try:
        pieces = list(string.Formatter().parse(text))
    except ValueError as e:
        return Problem(key, f"template {show(text)} is not well formed ({e})", hint + "; a literal brace is not allowed")
    for literal, name, spec, conv in pieces:
        if literal:
            parts.append(Part(literal))
        if name is None:
            continue
        m = FIELD_RE.fullmatch(name)
        if m is None or m.group(1) not in valid or conv:
            return Problem(key, f"unknown field {{{name}}} in template {show(text)}", hint)
        f, off = m.group(1), int(m.group(2) or 0)
        if spec and not SPEC_RE.fullmatch(spec):
            return Problem(key, f"field {{{name}:{spec}}} in template {show(text)}: the only format is zero padding, :01 to :09", hint)
        if f == "site":
            if site is None:
                return Problem(key, f"template {show(text)} uses {{site}}, but the naming section gives no site", "add site: (e.g. site: sjc1) to naming:")
            if off or spec:
                return Problem(key, f"{{site}} takes no offset or padding in template {show(text)}", hint)
            parts.append(Part(site))
        elif inline is not None and f in inline:
            if off or spec:
                return Problem(key, f"{{{f}}} takes no offset or padding in template {show(text)}", hint)
            parts.extend(inline[f])
        else:
            parts.append(Part("", f, off, int(spec[1:]) if spec else 0))
    merged: list[Part] = []
    for p in parts:  # adjacent literals as one (the regex and the byte fields stay short)
        if merged and not p.field and not merged[-1].field:
            merged[-1] = Part(merged[-1].text + p.text)
        else:
            merged.append(p)
    if not any(p.field for p in merged):
        return Problem(key, f"template {show(text)} has no field: every {key.rsplit('.', 1)[-1]} would get the same name", hint)
    rx = "".join(re.escape(p.text) if not p.field else (f"([0-9]{{{p.width}}}|[1-9][0-9]{{{p.width},8}})" if p.width else "(0|[1-9][0-9]{0,8})") for p in merged)
    return Template(key, text, tuple(merged), re.compile(rx, re.ASCII))


@dataclass(frozen=True, slots=True)
class NamingSpec:
    """The resolved section: the templates given (None: topogen's own names for that kind)."""

    site: str | None = None
    host: Template | None = None
    gpu: Template | None = None
    interface: Template | None = None
    switches: tuple[tuple[str, Template], ...] = ()  # (role, template) of the compute fabric's tiers given
    others: tuple[tuple[str, Template], ...] = ()  # (key, template) of the other networks' switches, PDUs and racks given

    def switch(self, role: str) -> Template | None:
        return dict(self.switches).get(role)

    def other(self, key: str) -> Template | None:
        """The template of ``key`` (``storage_leaf``, ``pdu``, ``rack``...), None: topogen's names."""
        return dict(self.others).get(key)

    def to_dict(self) -> dict[str, str]:
        """The section as written (summary.json, the spec hash)."""
        d = {"site": self.site} if self.site is not None else {}
        for k in ("host", "gpu", "interface"):
            t = getattr(self, k)
            if t is not None:
                d[k] = t.text
        d.update({r: t.text for r, t in self.switches})
        d.update({r: t.text for r, t in self.others})
        return d


def parse_naming(raw: Any, problems: list[Problem], path: str = "naming") -> NamingSpec | None:
    """The ``naming:`` mapping -> :class:`NamingSpec` (templates compiled); None when absent."""
    if raw is None:
        return None
    if not check_section(raw, KEYS, path, problems):
        return None
    site = raw.get("site")
    if site is not None and (not isinstance(site, str) or not SITE_RE.fullmatch(site)):
        problems.append(Problem(f"{path}.site", f"site must be lower-case letters, digits and '-' (not first or last), at most 32, got {show(site)}", "e.g. site: sjc1"))
        site = None
        if any(isinstance(v, str) and "{site" in v for v in raw.values()):
            return None  # reported once: the templates using it are not checked against a bad site
    got: dict[str, Template] = {}
    for key in KEYS[1:]:
        if raw.get(key) is None:
            continue
        inline = {"host": tuple(Part(p.text, "node" if p.field == "index" else p.field, p.offset, p.width) for p in got["host"].parts)} if key == "gpu" and "host" in got else {}
        if key == "gpu" and "host" not in got and isinstance(raw[key], str) and "{host" in raw[key]:
            problems.append(Problem(f"{path}.gpu", f"template {show(raw[key])} uses {{host}}, but naming gives no (valid) host template", "add host: (e.g. host: \"dgx{index:03}\"), or name the GPU by its fields ({domain}, {rank}...)"))
            continue
        t = compile_template(f"{path}.{key}", raw[key], KEY_FIELDS[key], site, inline)
        if isinstance(t, Problem):
            problems.append(t)
        else:
            got[key] = t
    others = tuple((k, got[k]) for k in (*NETWORK_ROLES, "pdu", "management_pdu", "rack") if k in got)
    return NamingSpec(site, got.get("host"), got.get("gpu"), got.get("interface"), tuple((r, got[r]) for r in SWITCH_ROLES if r in got), others)


# --- the checks that need the cluster's counts ----------------------------------------------

HOST_LIMIT = 63  # a DNS label (RFC 1035): the hostname, Slurm's NodeName, NetBox's device name (64)
GPU_LIMIT = 64  # NetBox's name field
IFACE_LIMIT = 15  # Linux IFNAMSIZ - 1


def check_limits(t: Template, sample: np.ndarray, kind: str, problems: list[Problem]) -> None:
    """Characters and length of the names ``t`` made (``sample``: all of them) against their consumer's limits."""
    longest = max(sample.tolist(), key=len) if len(sample) else ""
    if kind in ("host", "switch"):
        lit = "".join(p.text for p in t.parts if not p.field)
        if not LABEL_CHARS.fullmatch(lit):
            problems.append(Problem(t.key, f"template {show(t.text)} makes names such as {show(longest)} with characters a hostname cannot hold", "a host or switch name is a DNS label: lower-case letters a-z, digits and '-'"))
            return
        ends = [n for n in (sample[0], sample[-1]) if n.startswith("-") or n.endswith("-")] if len(sample) else []
        if ends:
            problems.append(Problem(t.key, f"template {show(t.text)} makes {show(ends[0])}, which starts or ends with '-'", "a DNS label starts and ends with a letter or digit"))
        limit, who = HOST_LIMIT, "a hostname label (RFC 1035), a Slurm NodeName and a NetBox device name"
    elif kind == "gpu":
        if not re.fullmatch(r"[A-Za-z0-9._-]*", "".join(p.text for p in t.parts if not p.field), re.ASCII):
            problems.append(Problem(t.key, f"template {show(t.text)} makes names such as {show(longest)} with characters other than letters, digits, '.', '_', '-'", "GPU names are written unquoted in CSV, JSON and configs"))
            return
        limit, who = GPU_LIMIT, "a NetBox name"
    else:
        if not IFACE_CHARS.fullmatch("".join(p.text for p in t.parts if not p.field)):
            problems.append(Problem(t.key, f"template {show(t.text)} makes interface names such as {show(longest)} with characters other than letters, digits, '_', '-'", "a Linux interface name (netplan set-name) takes no '/', ':', '.' or space"))
            return
        limit, who = IFACE_LIMIT, "a Linux interface name (IFNAMSIZ 16, with its NUL)"
    if len(longest) > limit:
        problems.append(Problem(t.key, f"template {show(t.text)} makes names of up to {len(longest)} characters ({show(longest)}); {who} holds at most {limit}", "shorten the literal text or the padding"))


def first_duplicate(names: np.ndarray) -> tuple[int, int] | None:
    """Indices ``(i, j)``, i < j, of the first two equal names, or None when all differ."""
    if len(names) < 2:
        return None
    order = np.argsort(names, kind="stable")
    s = names[order]
    same = np.flatnonzero(s[1:] == s[:-1])
    if not len(same):
        return None
    k = int(same[0])
    i, j = sorted((int(order[k]), int(order[k + 1])))
    return i, j


def duplicate_problem(t: Template, names: np.ndarray, what) -> Problem | None:
    """The Problem naming ``t`` and the two things it gives one name (``what(i)`` describes thing ``i``), or None."""
    d = first_duplicate(names)
    if d is None:
        return None
    i, j = d
    return Problem(t.key, f"template {show(t.text)} gives {what(i)} and {what(j)} the same name {show(str(names[i]))}", f"add fields that tell them apart; valid fields: {', '.join('{' + f + '}' for f in ('site', *KEY_FIELDS[t.key.rsplit('.', 1)[-1]]))}")


def host_values(ids: np.ndarray, per_domain: int, su_domains: int) -> dict[str, np.ndarray]:
    """The host template's fields of nodes ``ids`` (0-based over the cluster, domain-major)."""
    ids = np.asarray(ids, np.int64)
    d = ids // per_domain
    return {"domain": d, "slot": ids % per_domain, "index": ids, "su": d // su_domains if su_domains else np.zeros_like(ids)}


def gpu_values(ids: np.ndarray, hb_domain: int, per_node: int, su_domains: int) -> dict[str, np.ndarray]:
    """The gpu template's fields of GPUs ``ids``."""
    ids = np.asarray(ids, np.int64)
    d, r = np.divmod(ids, hb_domain)
    return {"domain": d, "rank": r, "index": ids, "node": ids // per_node, "slot": r // per_node, "local": r % per_node, "su": d // su_domains if su_domains else np.zeros_like(ids)}


def interface_values(rank, port, homes: int, per_node: int) -> dict[str, Any]:
    """The interface template's fields of NIC port ``port`` of the GPU of rank ``rank`` (scalars or arrays)."""
    return {"rank": rank, "local": np.asarray(rank) % per_node, "port": port, "plane": np.asarray(port) // homes, "home": np.asarray(port) % homes}


def gpu_id(values: dict[str, int], hb_domain: int, per_node: int) -> int | None:
    """The GPU id the fields of a parsed name give, or None when they do not tell it."""
    v = values
    if "index" in v:
        return v["index"]
    if "domain" in v and "rank" in v and v["rank"] < hb_domain:
        return v["domain"] * hb_domain + v["rank"]
    if "node" in v and "rank" in v and v["rank"] < hb_domain and v["rank"] // per_node == v["node"] % (hb_domain // per_node):
        return v["node"] // (hb_domain // per_node) * hb_domain + v["rank"]
    if "local" in v and v["local"] < per_node:
        if "node" in v:
            return v["node"] * per_node + v["local"]
        if "domain" in v and "slot" in v and v["slot"] < hb_domain // per_node:
            return v["domain"] * hb_domain + v["slot"] * per_node + v["local"]
    return None


def node_id(values: dict[str, int], per_domain: int) -> int | None:
    """The node index the fields of a parsed host name give, or None when they do not tell it."""
    v = values
    if "index" in v:
        return v["index"]
    if "domain" in v and "slot" in v and v["slot"] < per_domain:
        return v["domain"] * per_domain + v["slot"]
    if "domain" in v and per_domain == 1:
        return v["domain"]
    return None


def _read_back(t: Template, names: np.ndarray, ident, problems: list[Problem]) -> None:
    """The first and last names parse back to their own device (validate, diff and simulate --fail read names)."""
    for k in {0, len(names) - 1}:
        got = t.parse(str(names[k]))
        if got is None or ident(got) != k:
            problems.append(Problem(t.key, f"template {show(t.text)} makes {show(str(names[k]))}, which cannot be read back to its device", "name each device by fields that tell it (hosts: {index}, or {domain} and {slot}; GPUs: {index}, {domain} or {node} and {rank}, or {host}/{node} and {local}), with text between two fields or the first one padded"))
            return


def _check_all(t: Template, values: Mapping[str, np.ndarray], n: int, kind: str, what, ident, problems: list[Problem]) -> None:
    """The ``n`` names ``t`` makes of ``values``: within ``kind``'s limits, unique (``what(i)`` describes device ``i``), read back by ``ident``."""
    got = t.many(values, n)
    n0 = len(problems)
    check_limits(t, got, kind, problems)
    dup = duplicate_problem(t, got, what)
    if dup:
        problems.append(dup)
    if len(problems) == n0:
        _read_back(t, got, ident, problems)


def check_names(naming: NamingSpec, gpus: int, hb_domain: int, per_node: int, su_domains: int, nic_ports: int, homes: int, problems: list[Problem]) -> None:
    """Every host, GPU and interface name the templates make: unique, read back, within its consumer's limits.

    Formats every name at once (numpy), so a 131,072-GPU cluster is checked in well under a second.
    """
    per_domain = hb_domain // per_node
    nodes = gpus // per_node
    if naming.host is not None:
        v = host_values(np.arange(nodes, dtype=np.int64), per_domain, su_domains)
        _check_all(naming.host, v, nodes, "host", lambda i: f"node {i} (HB domain {i // per_domain}, slot {i % per_domain})", lambda f: node_id(f, per_domain), problems)
    if naming.gpu is not None:
        v = gpu_values(np.arange(gpus, dtype=np.int64), hb_domain, per_node, su_domains)
        _check_all(naming.gpu, v, gpus, "gpu", lambda i: f"GPU {i} (HB domain {i // hb_domain}, rank {i % hb_domain})", lambda f: gpu_id(f, hb_domain, per_node), problems)
    if naming.interface is not None:
        # one node's interfaces: the GPUs of its ranks (every rank occurs on some node) and their ports
        rank = np.repeat(np.arange(hb_domain, dtype=np.int64), nic_ports)
        port = np.tile(np.arange(nic_ports, dtype=np.int64), hb_domain)
        v = interface_values(rank, port, homes, per_node)
        got = naming.interface.many(v, len(rank))
        check_limits(naming.interface, got, "interface", problems)
        keyed = np.char.add(np.char.add((rank // per_node).astype(str), "/"), got)  # unique on each node
        d = first_duplicate(keyed)
        if d is not None:
            i, j = d
            problems.append(Problem(naming.interface.key, f"template {show(naming.interface.text)} gives GPU rank {int(rank[i])} port {int(port[i])} and GPU rank {int(rank[j])} port {int(port[j])} of one node the same interface name {show(str(got[i]))}", "add fields that tell them apart; valid fields: " + ", ".join("{" + f + "}" for f in ("site", *INTERFACE_FIELDS))))
