"""Load a build's NetBox files into NetBox through its REST API: plan, then bulk requests.

The rows are the build's own NetBox files (``netbox/sites.csv``, ``netbox/shared/``,
``netbox/ipam/``, each architecture's ``netbox/`` and ``netbox/ipam/``), read in the documented
import order and mapped to API objects by :data:`KINDS`: one kind per NetBox model, its
endpoint, its natural key (what identifies the row's object in NetBox), its references to
other objects (looked up by their natural key) and its typed fields.

:func:`plan` reads NetBox and sorts every row into *create* (missing), *change* (present, a
field differs), *same* (present and equal) and *foreign* (present, differs, and not tagged
``topogen``: someone else's object, changed only with ``adopt``). Shared prerequisites
(manufacturers, roles, device types, RIRs, ASNs) are never changed, only created when missing:
a second cluster's ``asns.csv`` that reuses private ASNs shares the ASN objects.
:func:`push` carries a plan out in bulk ``POST``/``PATCH`` requests of :data:`BATCH` objects, in
dependency order; each request is atomic in NetBox, and a rerun plans again from what NetBox
holds, so a run stopped part-way is completed by the next one, and a second run finds
everything *same*. Nothing here prints: progress goes to a callback.
"""

from __future__ import annotations

import csv
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

TAG = "topogen"
BATCH = 250  # objects per bulk request: NetBox saves each request in one transaction
JOBS = 3  # bulk requests in NetBox at once (its docs' gunicorn runs 2 x cores + 1 workers; a 2-core box serves 3 well)


class PushError(Exception):
    """NetBox unreachable, a token it refuses, a build without NetBox files, or a row NetBox refuses."""


@dataclass(frozen=True)
class Kind:
    name: str
    endpoint: str
    key: tuple[str, ...]  # CSV columns of the natural key
    refs: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)  # payload field -> (kind, CSV columns of its key)
    ints: tuple[str, ...] = ()
    floats: tuple[str, ...] = ()
    bools: tuple[str, ...] = ()
    shared: bool = False  # created when missing, never changed
    skip: tuple[str, ...] = ()  # CSV columns that are not fields of the object
    read: tuple[str, ...] = ()  # the fields a plan reads (NetBox's ``fields=``), when not all: a whole interface costs NetBox 5x more to render
    part_of: str = ""  # owned through what it belongs to (``device``, ``vrf``, ``ends``), not a tag of its own: see :func:`ours`
    # batches sent at once: "" one after another (a device, a prefix updates counters on the device type,
    # the parent prefixes it shares with its batch's neighbours), "device" when no two hold ports of one
    # device (an interface updates its device's counter), "any"
    parallel: str = ""


KINDS = {
    k.name: k
    for k in (
        Kind("site", "dcim/sites", ("name",)),
        Kind("manufacturer", "dcim/manufacturers", ("name",), shared=True),
        Kind("device-role", "dcim/device-roles", ("name",), shared=True),
        Kind("rack-role", "dcim/rack-roles", ("name",), shared=True),
        Kind("device-type", "dcim/device-types", ("manufacturer", "model"), {"manufacturer": ("manufacturer", ("manufacturer",))}, floats=("u_height",), shared=True),
        Kind("rir", "ipam/rirs", ("name",), bools=("is_private",), shared=True),
        Kind("asn", "ipam/asns", ("asn",), {"rir": ("rir", ("rir",))}, ints=("asn",), shared=True),
        Kind("rack", "dcim/racks", ("site", "name"), {"site": ("site", ("site",)), "role": ("rack-role", ("role",))}, ints=("width", "u_height"),
             read=("id", "site", "name", "role", "status", "width", "u_height", "description", "tags")),
        Kind("device", "dcim/devices", ("name",), {"site": ("site", ("site",)), "role": ("device-role", ("role",)), "device_type": ("device-type", ("manufacturer", "device_type")), "rack": ("rack", ("site", "rack"))}, floats=("position",), skip=("manufacturer",),
             read=("id", "name", "role", "device_type", "site", "rack", "position", "face", "status", "comments", "tags", "primary_ip4", "oob_ip")),
        Kind("interface", "dcim/interfaces", ("device", "name"), {"device": ("device", ("device",)), "lag": ("interface", ("device", "lag"))}, ints=("speed",), bools=("enabled",),
             read=("id", "device", "name", "type", "enabled", "speed", "description", "lag", "tags", "cable", "cable_end"), part_of="device", parallel="device"),
        Kind("vrf", "ipam/vrfs", ("name",), bools=("enforce_unique",)),
        Kind("prefix", "ipam/prefixes", ("vrf", "prefix"), {"vrf": ("vrf", ("vrf",))}, read=("id", "prefix", "vrf", "status", "description", "tags"), part_of="vrf"),
        Kind("ip-address", "ipam/ip-addresses", ("vrf", "address", "device", "interface"), {"vrf": ("vrf", ("vrf",)), "assigned_object_id": ("interface", ("device", "interface"))}, skip=("device", "interface", "is_primary", "is_oob"),
             read=("id", "address", "vrf", "status", "role", "description", "assigned_object_type", "assigned_object_id", "assigned_object", "tags"), part_of="vrf", parallel="any"),
        Kind("cable", "dcim/cables", ("label",), floats=("length",), skip=("side_a_site", "side_a_device", "side_a_type", "side_a_name", "side_b_site", "side_b_device", "side_b_type", "side_b_name"),
             read=("id", "label", "type", "status", "length", "length_unit", "comments", "tags"), part_of="ends", parallel="any"),
    )
}

SHARED_FILE = re.compile(r"^\d-(manufacturer|device-role|rack-role|device-type)-")


def _parts(d: Path, stem: str) -> list[Path]:
    one = d / f"{stem}.csv"
    return [one] if one.exists() else sorted(d.glob(f"{stem}-[0-9][0-9][0-9].csv"))


def build_files(build: Path) -> list[tuple[str, Path]]:
    """``(kind, file)`` of every NetBox file of a build, in the documented import order."""
    nb = build / "netbox"
    if not (nb / "sites.csv").is_file():
        raise PushError(f"{build}: not a build directory with NetBox files (no netbox/sites.csv; build with --formats netbox)")
    files = [("site", nb / "sites.csv")]
    files += [(SHARED_FILE.match(p.name).group(1), p) for p in sorted((nb / "shared").glob("*.csv")) if SHARED_FILE.match(p.name)]
    files += [(k, nb / "ipam" / f) for k, f in (("rir", "rirs.csv"), ("asn", "asns.csv")) if (nb / "ipam" / f).exists()]
    archs = sorted(p.parent.parent.name for p in build.glob("*/netbox/devices*.csv"))
    for arch in dict.fromkeys(archs):
        d = build / arch / "netbox"
        for kind, stem in (("rack", "racks"), ("device", "devices"), ("interface", "interfaces"), ("cable", "cables"),
                           ("rack", "networks-racks"), ("device", "networks-devices"), ("interface", "networks-interfaces"), ("cable", "networks-cables"),
                           ("vrf", "networks-vrfs"), ("prefix", "networks-prefixes"), ("ip-address", "networks-ip-addresses")):  # fmt: skip
            files += [(kind, p) for p in _parts(d, stem)]
        for kind, stem in (("vrf", "vrfs"), ("interface", "interfaces-virtual"), ("prefix", "prefixes"), ("ip-address", "ip-addresses")):
            files += [(kind, p) for p in _parts(d / "ipam", stem)]
    return files


def read_rows(path: Path) -> Iterator[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        yield from csv.DictReader(fh)


class Client:
    """Plain HTTP to NetBox's REST API; the token stays in the request header."""

    def __init__(self, url: str, token: str, timeout: float = 600):
        self.url = url.rstrip("/")
        self.timeout = timeout
        scheme = "Bearer" if token.startswith("nbt_") else "Token"
        self._headers = {"Authorization": f"{scheme} {token}", "Content-Type": "application/json", "Accept": "application/json"}

    def request(self, method: str, path: str, body=None) -> object:
        url = path if path.startswith("http") else f"{self.url}/api/{path}"
        req = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode(), headers=self._headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                data = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:2000]
            if exc.code in (401, 403):
                raise PushError(f"NetBox refused the token ({exc.code}): {detail}") from None
            raise PushError(f"{method} {url}: HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise PushError(f"cannot reach NetBox at {self.url}: {getattr(exc, 'reason', exc)}") from None
        return json.loads(data) if data else None

    def all(self, endpoint: str, fields: tuple[str, ...] = (), **params) -> list[dict]:
        q = urllib.parse.urlencode({"limit": 1000, **params, **({"fields": ",".join(fields)} if fields else {})})
        out, nxt = [], f"{endpoint}/?{q}"
        while nxt:
            page = self.request("GET", nxt)
            out += page["results"]
            nxt = page["next"]
        return out


def _value(v):
    """An API field as the CSV writes it: a reference's id, a choice's value."""
    if isinstance(v, dict):
        return v.get("id", v.get("value"))
    return v


@dataclass
class Plan:
    """Rows by what a push would do with them, per kind (in import order)."""

    create: dict[str, list[dict]] = field(default_factory=dict)
    change: dict[str, list[tuple[int, dict]]] = field(default_factory=dict)
    same: dict[str, int] = field(default_factory=dict)
    foreign: dict[str, list[str]] = field(default_factory=dict)  # kind -> keys of objects topogen did not create that differ
    shared_differ: dict[str, list[str]] = field(default_factory=dict)  # kind -> keys of shared objects NetBox holds otherwise (left alone)
    primaries: list[tuple[str, str, tuple]] = field(default_factory=list)  # (device, primary_ip4 | oob_ip, address key) of every row
    primary_todo: int = 0  # of those, the ones NetBox does not have yet

    def counts(self) -> dict[str, tuple[int, int, int, int]]:
        kinds = dict.fromkeys([*self.create, *self.change, *self.same, *self.foreign])
        return {k: (len(self.create.get(k, [])), len(self.change.get(k, [])), self.same.get(k, 0), len(self.foreign.get(k, []))) for k in kinds}

    @property
    def empty(self) -> bool:
        return not any(self.create.values()) and not any(self.change.values()) and not self.primary_todo


class State:
    """What NetBox holds of the kinds a build uses, by natural key, read once per kind."""

    def __init__(self, client: Client):
        self.client = client
        self.objects: dict[str, dict[tuple, dict]] = {}
        self.tag_id: int | None = None
        self._ids: dict[str, dict[int, dict]] = {}

    def key_of(self, kind: str, obj: dict) -> tuple:
        if kind == "device-type":
            return (obj["manufacturer"]["name"], obj["model"])
        if kind == "asn":
            return (str(obj["asn"]),)
        if kind == "rack":
            return (obj["site"]["name"], obj["name"])
        if kind == "interface":
            return (obj["device"]["name"], obj["name"])
        if kind == "prefix":
            return ((obj["vrf"] or {}).get("name", ""), obj["prefix"])
        if kind == "ip-address":  # an anycast gateway is one address on several interfaces
            on = obj.get("assigned_object") or {}
            return ((obj["vrf"] or {}).get("name", ""), obj["address"], (on.get("device") or {}).get("name", ""), on.get("name", ""))
        if kind == "cable":
            return (obj["label"],)
        return (obj["name"],)

    def load(self, kind: str, sites: list[str], vrfs: list[str]) -> dict[tuple, dict]:
        if kind in self.objects:
            return self.objects[kind]
        k = KINDS[kind]
        if kind in ("rack", "device", "interface", "cable"):  # by site: only the build's sites that exist
            slugs = [o["slug"] for s in sites if (o := self.objects.get("site", {}).get((s,)))]
            objs = [o for slug in slugs for o in self.client.all(k.endpoint, k.read, site=slug)]
        elif kind in ("prefix", "ip-address"):
            ids = [self.objects["vrf"][(v,)]["id"] for v in vrfs if (v,) in self.objects.get("vrf", {})]
            objs = [o for i in ids for o in self.client.all(k.endpoint, k.read, vrf_id=i)]
        else:
            objs = self.client.all(k.endpoint, k.read)
        if kind == "cable":  # a cable's ends as its interfaces name them: rendering them with the cable costs NetBox 10x more
            ends: dict[int, dict[str, list]] = {}
            for i in self.objects.get("interface", {}).values():
                if i.get("cable"):
                    ends.setdefault(_value(i["cable"]), {}).setdefault(i["cable_end"], []).append({"object_type": "dcim.interface", "object_id": i["id"]})
            for o in objs:
                o["a_terminations"], o["b_terminations"] = ends.get(o["id"], {}).get("A", []), ends.get(o["id"], {}).get("B", [])
                o["_ends_read"] = False
        self.objects[kind] = {self.key_of(kind, o): o for o in objs}
        return self.objects[kind]

    def full(self, kind: str, obj: dict) -> dict:
        """``obj`` as NetBox renders it whole (a cable with the ends NetBox holds, also outside the build's sites)."""
        return self.client.request("GET", f"{KINDS[kind].endpoint}/{obj['id']}/")

    def ours(self, kind: str, obj: dict) -> bool:
        """Made by topogen: tagged, or a part (an interface, a prefix or address, a cable) of what topogen made.

        Sites, racks, devices and VRFs carry the ``topogen`` tag; the objects they hold do not, since
        tagging each costs NetBox a second write and change record per object (it halves the rate of a
        push): an interface is topogen's when its device is, a prefix or an address when its VRF is, a
        cable when the devices at both of its ends are."""
        if any(t["slug"] == TAG for t in obj.get("tags") or []):
            return True
        k = KINDS[kind]
        if k.part_of in ("device", "vrf"):
            return self._tagged(k.part_of, _value(obj.get(k.part_of)))
        if k.part_of == "ends":
            ifaces = self._by_id("interface")
            ids = [t["object_id"] for t in obj["a_terminations"] + obj["b_terminations"]]
            return bool(ids) and all(i in ifaces and self._tagged("device", _value(ifaces[i]["device"])) for i in ids)
        return False

    def _by_id(self, kind: str) -> dict[int, dict]:
        if kind not in self._ids:
            self._ids[kind] = {o["id"]: o for o in self.objects.get(kind, {}).values()}
        return self._ids[kind]

    def _tagged(self, kind: str, oid) -> bool:
        o = self._by_id(kind).get(oid)
        return o is not None and any(t["slug"] == TAG for t in o.get("tags") or [])


def _typed(k: Kind, row: dict) -> dict:
    """A row's own fields as the API takes them (references are filled in by :func:`plan`)."""
    out = {}
    for col, v in row.items():
        if col in k.skip or col in k.refs:
            continue
        if col in k.ints:
            out[col] = int(v) if v != "" else None
        elif col in k.floats:
            out[col] = float(v) if v != "" else None
        elif col in k.bools:
            out[col] = v == "true"
        elif v == "" and col in ("face", "role", "length_unit"):
            out[col] = None  # an empty choice is null in the API
        else:
            out[col] = v
    return out


def _same(kind: str, want: dict, have: dict) -> bool:
    for f, v in want.items():
        if f in ("tags",):
            continue
        if f in ("a_terminations", "b_terminations"):
            got = sorted((t["object_type"], t["object_id"]) for t in have[f])
            if got != sorted((t["object_type"], t["object_id"]) for t in v):
                return False
            continue
        h = _value(have.get(f))
        if isinstance(v, float) or (f in KINDS[kind].floats and v is not None):
            if h is None or v is None:
                if h != v:
                    return False
            elif float(h) != float(v):
                return False
        elif (h if h is not None else "") != (v if v is not None else ""):
            return False
    return True


def plan(client: Client, build: Path, adopt: bool = False, on_kind: Callable[[str], None] | None = None) -> Plan:
    """What a push of ``build`` would create, change, leave and refuse, from what NetBox holds now."""
    files = build_files(build)
    st = State(client)
    tags = client.all("extras/tags", slug=TAG)
    st.tag_id = tags[0]["id"] if tags else None
    p = Plan()
    rows_by_kind: dict[str, list[tuple[Path, dict]]] = {}
    for kind, path in files:
        rows_by_kind.setdefault(kind, []).extend((path, r) for r in read_rows(path))
    sites = [r["name"] for _, r in rows_by_kind.get("site", [])]
    vrfs = [r["name"] for _, r in rows_by_kind.get("vrf", [])]
    pending: dict[str, set[tuple]] = {}  # keys a push creates before a later kind refers to them
    for kind in KINDS:
        if kind not in rows_by_kind:
            continue
        if on_kind:
            on_kind(kind)
        k = KINDS[kind]
        have = st.load(kind, sites, vrfs)
        create, change, foreign, same = [], [], [], 0
        seen: set[tuple] = set()
        for path, row in rows_by_kind[kind]:
            key = tuple(row[c] for c in k.key)
            if key in seen:
                continue  # ASNs shared by both architectures: once
            seen.add(key)
            want = _typed(k, row)
            for fld, (rkind, cols) in k.refs.items():
                rkey = tuple(row.get(c, "") for c in cols)
                if any(x == "" for x in rkey):
                    if fld == "lag" or fld == "role":
                        want[fld] = None
                    continue
                obj = st.objects.get(rkind, {}).get(rkey)
                if obj is None:
                    if rkey in pending.get(rkind, set()):
                        want[fld] = ("ref", rkind, rkey)
                        continue
                    raise PushError(f"{path.name}: row {key}: {fld} {rkey} is neither in NetBox nor in the build")
                want[fld] = obj["id"]
            if kind == "ip-address":
                want["assigned_object_type"] = "dcim.interface"
            if kind == "cable":
                for side in ("a", "b"):
                    ikey = (row[f"side_{side}_device"], row[f"side_{side}_name"])
                    obj = st.objects["interface"].get(ikey)
                    want[f"{side}_terminations"] = [{"object_type": row[f"side_{side}_type"], "object_id": obj["id"] if obj else ("ref", "interface", ikey)}]
            if kind == "ip-address" and (row.get("is_primary") == "true" or row.get("is_oob") == "true"):
                p.primaries.append((row["device"], "primary_ip4" if row.get("is_primary") == "true" else "oob_ip", key))
            cur = have.get(key)
            if cur is not None and cur.get("_ends_read") is False and not _same(kind, want, cur):
                cur = have[key] = st.full(kind, cur)  # ends outside the build's sites: as NetBox holds them
            if cur is None:
                create.append({**want, "_key": key})
                pending.setdefault(kind, set()).add(key)
            elif any(isinstance(v, tuple) for v in want.values()) or not _same(kind, want, cur):
                if k.shared:
                    same += 1  # shared objects are left alone when present
                    p.shared_differ.setdefault(kind, []).append("/".join(key))
                elif adopt or st.ours(kind, cur):
                    change.append((cur["id"], want))
                else:
                    foreign.append("/".join(key))
            else:
                same += 1
        p.create[kind], p.change[kind], p.same[kind], p.foreign[kind] = create, change, same, foreign
    for dev, fld, key in p.primaries:
        d, ip = st.objects.get("device", {}).get((dev,)), st.objects.get("ip-address", {}).get(key)
        p.primary_todo += d is None or ip is None or _value(d.get(fld)) != ip["id"]
    return p


def render_plan(p: Plan, dry_run: bool) -> str:
    """The plan as a table: per kind, what a push creates, changes, leaves, and refuses to change."""
    lines = [f"{'kind':<12} {'create':>8} {'change':>8} {'same':>8} {'not ours':>8}"]
    for kind, (c, u, s, f) in p.counts().items():
        lines.append(f"{kind:<12} {c:>8,} {u:>8,} {s:>8,} {f:>8,}")
    if p.primaries:
        lines.append(f"{'primary ips':<12} {p.primary_todo:>8,} {'':>8} {len(p.primaries) - p.primary_todo:>8,}")
    for kind, keys in p.foreign.items():
        if keys:
            lines.append(f"not ours: {len(keys):,} {kind}(s) differ and carry no '{TAG}' tag, left unchanged (e.g. {keys[0]}); --yes-adopt changes them")
    if p.empty:
        lines.append("nothing to do: NetBox already holds this build")
    elif dry_run:
        lines.append("dry run: nothing changed")
    return "\n".join(lines)


def _resolve(client: Client, st_objs: dict[str, dict[tuple, dict]], obj: dict) -> dict:
    def fix(v):
        if isinstance(v, tuple) and v and v[0] == "ref":
            o = st_objs.get(v[1], {}).get(v[2])
            if o is None:
                raise PushError(f"{v[1]} {v[2]} was to be created first but is missing")
            return o["id"]
        if isinstance(v, list):
            return [{**t, "object_id": fix(t["object_id"])} for t in v]
        return v

    return {f: fix(v) for f, v in obj.items()}


def waves(kind: str, objs: list[dict]) -> list[list[dict]]:
    """``objs`` (to create, in plan order) in waves: an object that refers to another of its kind
    that this push creates (a port to its bond) goes in a wave after that object's, since NetBox
    needs the other's id and a bulk request saves its objects before any id is known."""
    own = [f for f, (rkind, _cols) in KINDS[kind].refs.items() if rkind == kind]
    if not own:
        return [objs] if objs else []
    by_key = {o["_key"]: o for o in objs}
    depth: dict[tuple, int] = {}

    def depth_of(o: dict, seen: tuple = ()) -> int:
        if o["_key"] not in depth:
            targets = [by_key.get(o[f][2]) for f in own if isinstance(o.get(f), tuple)]
            if any(t is None or t["_key"] in seen for t in targets):
                raise PushError(f"{kind} {o['_key']}: refers to a {kind} that is neither in NetBox nor before it in the build")
            depth[o["_key"]] = max((1 + depth_of(t, (*seen, o["_key"])) for t in targets), default=0)
        return depth[o["_key"]]

    out: list[list[dict]] = []
    for o in objs:
        d = depth_of(o)
        out += [[] for _ in range(d + 1 - len(out))]
        out[d].append(o)
    return out


def batches_of(k: Kind, objs: list, of: Callable[[object], dict] = lambda o: o) -> list[list]:
    """``objs`` in bulk requests of about :data:`BATCH`; for ``parallel="device"`` kinds no two
    requests hold objects of one device (a device's ports are one request, larger when it has more)."""
    if k.parallel != "device":
        return [objs[i : i + BATCH] for i in range(0, len(objs), BATCH)]
    by_dev: dict[object, list] = {}
    for o in objs:
        by_dev.setdefault(repr(of(o)["device"]), []).append(o)
    out: list[list] = [[]]
    for group in by_dev.values():
        if out[-1] and len(out[-1]) + len(group) > BATCH:
            out.append([])
        out[-1] += group
    return [b for b in out if b]


def push(client: Client, build: Path, p: Plan, progress: Callable[[str, int, int, float], None] | None = None, jobs: int = JOBS) -> dict[str, int]:
    """Carry out plan ``p`` (from :func:`plan` of the same ``build``) in bulk requests; returns objects written per kind.

    Kinds go in dependency order, and each kind in waves (:func:`waves`); the batches of one wave
    do not refer to each other, so up to ``jobs`` of them are in NetBox at once (NetBox serves each
    request in a worker process of its own, and saves each batch in one transaction)."""
    tags = client.all("extras/tags", slug=TAG)
    if not tags:
        client.request("POST", "extras/tags/", {"name": TAG, "slug": TAG, "color": "9e9e9e", "description": "created by topogen netbox push"})
    st = State(client)  # what this push creates, by key: later kinds refer to it
    sites = [r["name"] for r in read_rows(build / "netbox" / "sites.csv")]
    written: dict[str, int] = {}
    for kind in KINDS:
        todo_c, todo_u = p.create.get(kind, []), p.change.get(kind, [])
        if not todo_c and not todo_u:
            continue
        k = KINDS[kind]
        order = todo_c
        if k.shared:  # another push may have made them since the plan: shared objects are never made twice
            now = {st.key_of(kind, o): o for o in client.all(k.endpoint)}
            st.objects.setdefault(kind, {}).update({key: o for key, o in now.items()})
            order = [o for o in order if o["_key"] not in now]
        tag = {} if k.part_of else {"tags": [{"slug": TAG}]}
        t0, done, total = time.monotonic(), 0, len(order) + len(todo_u)
        rounds = [[("POST", b) for b in batches_of(k, wave)] for wave in waves(kind, order)]
        rounds += [[("PATCH", [{"id": i, **o} for i, o in b]) for b in batches_of(k, todo_u, lambda io: io[1])]]

        def send(method: str, batch: list[dict], kind=kind, k=k, tag=tag) -> tuple[int, list]:
            body = [{**_resolve(client, st.objects, {f: v for f, v in o.items() if f != "_key"}), **tag} for o in batch]
            try:
                try:
                    return len(batch), client.request(method, f"{k.endpoint}/", body) or []
                except PushError as exc:
                    if "deadlock detected" not in str(exc):
                        raise
                    time.sleep(1)  # PostgreSQL rolled the whole batch back: once more, alone by then
                    return len(batch), client.request(method, f"{k.endpoint}/", body) or []
            except PushError as exc:
                raise PushError(f"{kind}s: NetBox refused a batch of {len(batch):,} ({exc}); the {done:,} of {total:,} before are saved, a rerun goes on from there") from None

        with ThreadPoolExecutor(max(1, jobs) if k.parallel else 1) as pool:
            for batches in rounds:  # a wave's references are all known before it starts
                futs = [pool.submit(send, m, b) for m, b in batches]
                for fut in as_completed(futs):
                    try:
                        n, made = fut.result()
                    except PushError:
                        for f in futs:
                            f.cancel()  # the batches not yet sent stay unsent: a rerun plans them again
                        raise
                    for o in made:
                        st.objects.setdefault(kind, {})[st.key_of(kind, o)] = o
                    done += n
                    if progress:
                        progress(kind, done, total, done / max(time.monotonic() - t0, 1e-9))
        written[kind] = total
    if p.primary_todo:
        written["primary-ip"] = _primaries(client, State(client), sites, p.primaries)
    return written


def primary_changes(client: Client, st: State, sites: list[str], primaries) -> list[dict]:
    """The ``primary_ip4``/``oob_ip`` each device still needs."""
    for dep in ("site", "vrf", "device"):
        st.load(dep, sites, [])
    vrfs = sorted({key[0] for _d, _f, key in primaries})
    st.objects.pop("ip-address", None)
    st.load("ip-address", sites, vrfs)
    out: dict[int, dict] = {}
    for dev, fld, key in primaries:
        d, ip = st.objects["device"].get((dev,)), st.objects["ip-address"].get(key)
        if d is None or ip is None:
            raise PushError(f"{fld} of {dev}: device or address {key} missing")
        if _value(d.get(fld)) != ip["id"]:
            out.setdefault(d["id"], {"id": d["id"]})[fld] = ip["id"]
    return list(out.values())


def _primaries(client: Client, st: State, sites: list[str], primaries) -> int:
    todo = primary_changes(client, st, sites, primaries)
    for i in range(0, len(todo), BATCH):
        client.request("PATCH", "dcim/devices/", todo[i : i + BATCH])
    return len(todo)
