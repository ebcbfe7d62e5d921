"""Boot a build's FRR configurations in Linux network namespaces and prove the fabric routes as designed.

:func:`run` reads what ``topogen build --formats cabling,addressing,frr`` wrote
for one architecture (``cabling.csv``, ``addressing.csv``, ``frr/**.conf``) and:

1. makes a network namespace per switch and per sampled GPU NIC, and a veth
   pair per cable between them (cabled from ``cabling.csv``; a cable to a GPU
   left out of the sample is left out);
2. starts ``zebra``, ``bgpd`` and ``bfdd`` (Debian's ``frr``) in every switch
   namespace, each with its pid file, vty sockets and log in a temporary
   directory, and loads the switch's ``frr.conf`` unchanged through ``vtysh -f``;
   the GPU NICs get their address and their route to the fabric as in
   ``addressing.csv``;
3. waits until every leaf holds a route to every GPU it should reach with its
   full ECMP width (the *convergence time*), then checks (:class:`Report`):
   every BGP session Established; each sampled GPU reaches every sampled GPU
   of its rail (and, rail-optimized, of every rail) by ``ip route get`` and an
   ICMP echo; the ECMP next hops at each leaf equal its uplinks; rail-only: no
   route between rails, at the GPU and at its leaf;
4. takes one leaf uplink down, waits for the routes one next hop narrower
   (the reconvergence time) and checks reachability again, then brings the link
   back and waits for the full width;
5. removes every daemon (by pid) and namespace it made, on success, failure,
   exception and SIGINT/SIGTERM; a run killed outright leaves a state file that
   the next run reads to remove its leftovers.

A switch carrying several rails (``vrf rail<r>`` sections) runs as one router
per VRF when the kernel has no VRF devices (``CONFIG_NET_VRF``): each VRF's
interfaces and ``router bgp ... vrf`` become their own namespace and FRR
instance, the isolation a VRF gives. The unchanged file is first checked by
``vtysh --dryrun``.

Library code: never prints; ``progress(text)`` hears each step. Bad input (not
root, no FRR, a build without the files, a fabric bigger than the machine
holds) raises :class:`~topogen.errors.InputError`.
"""

from __future__ import annotations

import csv
import ctypes
import ipaddress
import json
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from topogen.util.errors import InputError, Problem

FRR_DIR = Path("/usr/lib/frr")
DAEMONS = ("zebra", "bgpd", "bfdd")
STATE_DIR = Path("/run/topogen-emulate")
MB_PER_ROUTER = 48  # zebra + bgpd + bfdd resident, measured about 30 MiB; with head room
MAX_ROUTERS = 400  # two cores converge this many FRR instances in a few minutes at most
ROLE_ORDER = {"gpu": 0, "leaf": 1, "spine": 2, "core": 3}
GPU_NAME = re.compile(r"hb([0-9]+)-gpu([0-9]+)")
CLONE_NEWNET = 0x40000000


def _role_rank(role: str) -> int:
    return ROLE_ORDER.get(role, int(role[4:]) if role.startswith("tier") and role[4:].isdigit() else 99)


# ---------------------------------------------------------------- the lab, read from a build


@dataclass
class Port:
    device: str
    name: str
    vrf: str
    vlan: str
    address: str  # a.b.c.d/len or ""
    peer: str
    peer_port: str
    peer_address: str


@dataclass
class Router:
    """One FRR instance: a switch, or one VRF of a switch carrying several rails."""

    name: str  # the switch, or <switch>/<vrf>
    switch: str
    role: str
    vrf: str
    config: str
    ports: list[Port] = field(default_factory=list)
    ns: str = ""
    asn: str = ""

    def uplinks(self, roles: dict[str, str]) -> list[Port]:
        return [p for p in self.ports if roles.get(p.peer, "gpu") != "gpu" and _role_rank(roles[p.peer]) > _role_rank(self.role)]


@dataclass
class Host:
    """One GPU NIC port: a namespace with one interface."""

    gpu: str
    nic: str
    rail: int
    address: str
    gateway: str
    route: str
    leaf: str
    leaf_port: str
    ns: str = ""

    @property
    def ip(self) -> str:
        return self.address.split("/")[0]


@dataclass
class Lab:
    arch: str
    routers: list[Router]
    hosts: list[Host]
    cables: list[tuple[str, str, str, str]]  # a device, a port, z device, z port
    roles: dict[str, str]
    gpus_total: int
    configs: dict[str, Path]  # switch -> its frr.conf as built


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _arch_dir(build: Path, arch: str | None) -> tuple[str, Path]:
    if not build.is_dir():
        raise InputError([Problem("build_dir", f"{build} is not a directory", "give a build directory written by topogen build --formats cabling,addressing,frr (e.g. out/demo)")])
    have = [a for a in ("rail-optimized", "rail-only") if (build / a / "addressing.csv").is_file()]
    if arch is not None:
        if arch not in have:
            raise InputError([Problem("arch", f"{build} has no {arch}/addressing.csv", f"architectures there: {', '.join(have) or 'none'}; build with --formats cabling,addressing,frr")])
        return arch, build / arch
    if len(have) != 1:
        raise InputError([Problem("arch", f"{build} holds {len(have)} architectures with addressing.csv ({', '.join(have) or 'none'})", "pick one with --arch rail-optimized or --arch rail-only; build with --formats cabling,addressing,frr")])
    return have[0], build / have[0]


def split_vrfs(text: str) -> dict[str, str]:
    """A ``frr.conf`` cut into one configuration per VRF (``""`` the default): what a router per VRF loads.

    ``vrf X`` blocks go away, ``interface P vrf X`` and ``router bgp N vrf X``
    go to X's router without the ``vrf X``, other interface and BGP blocks to
    the default router, every other line (hostname, prefix lists, route maps,
    BFD profiles) to all.
    """
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line and not line[0].isspace() and line != "!" and not line.startswith("exit"):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    vrfs = sorted({b[0].split()[1] for b in blocks if b[0].startswith("vrf ")})
    out = {v: [] for v in [""] + vrfs}
    for b in blocks:
        head = b[0].split()
        if head[:1] == ["vrf"]:
            continue
        if head[:1] == ["interface"] or head[:2] == ["router", "bgp"]:
            v = head[head.index("vrf") + 1] if "vrf" in head else ""
            out[v].append("\n".join([" ".join(head[: head.index("vrf")]) if v else b[0]] + b[1:]))
        else:
            for v in out:
                out[v].append("\n".join(b))
    return {v: "\n".join(lines) + "\n" for v, lines in out.items()}


def load_lab(build: Path, arch: str | None, max_gpus: int) -> Lab:
    """The routers, GPU hosts and cables of one architecture of a build; GPUs sampled to ``max_gpus``."""
    arch, root = _arch_dir(Path(build), arch)
    problems = []
    for need in ("cabling.csv", "addressing.csv", "frr"):
        if not (root / need).exists():
            problems.append(Problem("build", f"{root / need} is missing", "build with --formats cabling,addressing,frr"))
    if problems:
        raise InputError(problems)
    configs = {p.stem: p for p in sorted((root / "frr").rglob("*.conf"))}
    rows = _read_csv(root / "addressing.csv")
    roles = {r["device"]: r["role"] for r in rows}
    asns = {r["device"]: r["asn"] for r in rows if r["role"] != "gpu"}
    ports: dict[str, list[Port]] = {}
    gpu_rows = []
    for r in rows:
        if r["role"] == "gpu":
            gpu_rows.append(r)
        elif r["interface"].startswith("p"):
            ports.setdefault(r["device"], []).append(Port(r["device"], r["interface"], r["vrf"], r["vlan"], r["address"], r["peer_device"], r["peer_interface"], r["peer_address"]))
    switches = [d for d in dict.fromkeys(r["device"] for r in rows if r["role"] != "gpu")]
    missing = [s for s in switches if s not in configs]
    if missing:
        raise InputError([Problem("build", f"no frr.conf for {len(missing)} switch(es): {', '.join(missing[:3])}", f"expected {root / 'frr'}/**/<switch>.conf; build with --formats frr")])
    routers = []
    for s in switches:
        text = configs[s].read_text(encoding="utf-8")
        parts = split_vrfs(text)
        for vrf, conf in parts.items():
            name = s if vrf == "" else f"{s}/{vrf}"
            routers.append(Router(name, s, roles[s], vrf, conf if len(parts) > 1 else text, [p for p in ports.get(s, []) if p.vrf == vrf], asn=asns.get(s, "")))
    hosts = []
    for r in gpu_rows:
        m = GPU_NAME.fullmatch(r["device"])
        rail = int(m.group(2)) if m else -1
        hosts.append(Host(r["device"], r["interface"], rail, r["address"], r["peer_address"].split("/")[0], r["route"], r["peer_device"], r["peer_interface"]))
    gpus = sorted({h.gpu for h in hosts}, key=_gpu_key)
    picked = set(sample_gpus(gpus, max_gpus))
    hosts = [h for h in hosts if h.gpu in picked]
    cables = [(c["a_device"], c["a_port"], c["z_device"], c["z_port"]) for c in _read_csv(root / "cabling.csv")]
    return Lab(arch, routers, hosts, cables, roles, len(gpus), {s: configs[s] for s in switches})


def _gpu_key(name: str) -> tuple[int, int]:
    m = GPU_NAME.fullmatch(name)
    return (int(m.group(1)), int(m.group(2))) if m else (1 << 62, 0)


def sample_gpus(gpus: list[str], limit: int) -> list[str]:
    """Every GPU when there are at most ``limit``; else whole HB domains spread evenly from first to last.

    Whole domains keep every rail in the sample (the cross-rail checks need
    them); the spread reaches the leaves of the first and the last group. The
    choice depends only on the names and ``limit``: the same build samples alike.
    """
    if len(gpus) <= limit:
        return list(gpus)
    domains: dict[int, list[str]] = {}
    for g in gpus:
        domains.setdefault(_gpu_key(g)[0], []).append(g)
    keys = sorted(domains)
    per = max(len(v) for v in domains.values())
    want = max(2, min(len(keys), limit // per))
    idx = sorted({round(i * (len(keys) - 1) / (want - 1)) for i in range(want)})
    return [g for i in idx for g in domains[keys[i]]]


NEIGHBOR_RE = re.compile(r"^ neighbor (\S+)( interface)? remote-as (\S+)\s*$")


def bgp_mismatches(r: Router, roles: dict[str, str], asns: dict[str, str]) -> list[str]:
    """What router ``r``'s configuration says about BGP that the plan does not: ASN, neighbours, their ASNs."""
    out = []
    local = [ln.split() for ln in r.config.splitlines() if ln.startswith("router bgp ")]
    if not local and r.ports:
        out.append(f"{r.name}: no 'router bgp' section; the plan gives AS {r.asn}")
    elif local and local[0][2] != r.asn:
        out.append(f"{r.name}: router bgp {local[0][2]}, the plan gives AS {r.asn}")
    said = {}
    for ln in r.config.splitlines():
        m = NEIGHBOR_RE.match(ln)
        if m:
            said[m.group(1)] = m.group(3)
    wanted = {}
    for p in r.ports:
        if roles.get(p.peer, "gpu") == "gpu":
            continue
        key = p.peer_address.split("/")[0] if p.peer_address else p.name
        wanted[key] = (p, asns.get(p.peer, "?"))
    for key, (p, asn) in wanted.items():
        if key not in said:
            out.append(f"{r.name}: no BGP neighbour {key} on {p.name} (to {p.peer}:{p.peer_port}, AS {asn})")
        elif said[key] != asn:
            out.append(f"{r.name}: neighbour {key} on {p.name} has remote-as {said[key]}, but {p.peer} is AS {asn}")
    for key in said:
        if key not in wanted:
            out.append(f"{r.name}: BGP neighbour {key} is on no cabled port of the plan")
    return out


# ---------------------------------------------------------------- capacity


def capacity_problems(lab: Lab) -> list[Problem]:
    """Refuse what this machine cannot hold: memory for every FRR instance, and a ceiling on their count."""
    n = len(lab.routers)
    need_mb = n * MB_PER_ROUTER + len(lab.hosts)
    avail_mb = _mem_available_mb()
    problems = []
    if n > MAX_ROUTERS:
        problems.append(Problem("build", f"the {lab.arch} fabric has {n:,} routers (switches and VRFs); emulate runs at most {MAX_ROUTERS} on one machine", "emulate a smaller build of the same shape (fewer GPUs, same radix and HB domain)"))
    elif avail_mb is not None and need_mb > avail_mb * 0.8:
        problems.append(Problem("build", f"the {lab.arch} fabric needs about {need_mb:,} MiB for {n:,} FRR routers ({MB_PER_ROUTER} MiB each); this machine has {avail_mb:,} MiB available", f"emulate at most about {int(avail_mb * 0.8) // MB_PER_ROUTER} switches here, or free memory"))
    return problems


def _mem_available_mb() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


def environment_problems() -> list[Problem]:
    """Root, ``ip``, FRR's daemons and ``vtysh``."""
    problems = []
    if os.geteuid() != 0:
        problems.append(Problem("emulate", "emulate needs root (it makes network namespaces and starts FRR in them)", "run it as root, e.g. sudo topogen emulate BUILD_DIR"))
    if shutil.which("ip") is None:
        problems.append(Problem("emulate", "the 'ip' command (iproute2) is not installed", "apt-get install iproute2"))
    for d in DAEMONS:
        if not (FRR_DIR / d).is_file():
            problems.append(Problem("emulate", f"FRR's {d} is not at {FRR_DIR / d}", "apt-get install frr"))
    if shutil.which("vtysh") is None:
        problems.append(Problem("emulate", "FRR's vtysh is not installed", "apt-get install frr"))
    return problems


# ---------------------------------------------------------------- namespaces, daemons, clean-up


def _ip(args: list[str], batch: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    cmd = ["ip"] + args + (["-force", "-batch", "-"] if batch is not None else [])
    res = subprocess.run(cmd, input=batch, capture_output=True, text=True)
    if check and res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr.strip()[:2000]}")
    return res


class Resources:
    """What a run made, recorded in a state file before it is made, so any exit (or the next run) removes it."""

    def __init__(self, tag: str):
        self.tag = tag
        self.tmp = Path(tempfile.mkdtemp(prefix=f"topogen-emulate-{tag}-"))
        os.chmod(self.tmp, 0o755)
        self.namespaces: list[str] = []
        self.procs: list[subprocess.Popen] = []
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self.state = STATE_DIR / f"{os.getpid()}.json"
        self._save()

    def _save(self) -> None:
        data = {"pid": os.getpid(), "tmp": str(self.tmp), "namespaces": self.namespaces, "daemons": [p.pid for p in self.procs]}
        tmp = self.state.with_suffix(".new")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, self.state)

    def add_namespaces(self, names: list[str]) -> None:
        self.namespaces += names
        self._save()
        _ip([], "".join(f"netns add {n}\n" for n in names))

    def start(self, cmd: list[str], log: Path | None = None) -> subprocess.Popen:
        """Start ``cmd`` (output to ``log``, else a pipe) and record it before a signal can interrupt (SIGINT/SIGTERM held meanwhile)."""
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})

        def unblock() -> None:  # in the child: a daemon must not inherit the held signals (it would ignore SIGTERM)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

        try:
            if log is None:
                p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, start_new_session=True, preexec_fn=unblock)
            else:
                with open(log, "ab") as fh:
                    p = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=unblock)
            self.procs.append(p)
            self._save()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        return p

    def cleanup(self) -> list[str]:
        """Stop every daemon (SIGTERM, then SIGKILL after 5 s), delete every namespace and the temporary files."""
        errors = []
        stop_pids(sorted({p.pid for p in self.procs} | set(pids_naming(str(self.tmp)))), str(self.tmp), errors)
        for p in self.procs:
            try:
                p.wait(timeout=0)
            except subprocess.TimeoutExpired:
                pass
        if self.namespaces:
            _ip([], "".join(f"netns del {n}\n" for n in self.namespaces), check=False)
            left = [n for n in self.namespaces if Path(f"/run/netns/{n}").exists()]
            if left:
                errors.append(f"namespaces not removed: {', '.join(left[:5])}")
        shutil.rmtree(self.tmp, ignore_errors=True)
        if not errors:
            self.state.unlink(missing_ok=True)
        return errors


def stop_pids(pids: Iterable[int], marker: str, errors: list[str]) -> None:
    """SIGTERM each pid whose command line names ``marker`` (ours: the run's temporary directory), SIGKILL after 5 s."""
    mine = [p for p in pids if marker in _cmdline(p)]
    for p in mine:
        _kill(p, signal.SIGTERM)
    end = time.monotonic() + 5
    while time.monotonic() < end and any(_alive(p, marker) for p in mine):
        time.sleep(0.05)
    for p in mine:
        if _alive(p, marker):
            _kill(p, signal.SIGKILL)
    end = time.monotonic() + 2
    while time.monotonic() < end and any(_alive(p, marker) for p in mine):
        time.sleep(0.05)
    stuck = [p for p in mine if _alive(p, marker)]
    if stuck:
        errors.append(f"daemons still running: {stuck[:5]}")


def pids_naming(marker: str) -> list[int]:
    """Processes whose command line names ``marker`` (a run's own temporary directory, unique to it).

    Catches a daemon a signal kept from being recorded (started between the fork and the
    bookkeeping); nothing else names that directory.
    """
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit() and marker in _cmdline(int(p.name)):
            out.append(int(p.name))
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _alive(pid: int, marker: str) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z" and marker in _cmdline(pid)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def remove_leftovers() -> list[str]:
    """Remove what runs killed outright left (their state files name it); returns notes."""
    notes = []
    if not STATE_DIR.is_dir():
        return notes
    for f in sorted(STATE_DIR.glob("*.json")):
        try:
            data = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if data.get("pid") == os.getpid() or Path(f"/proc/{data.get('pid')}").exists():
            continue  # a run still going
        errors: list[str] = []
        marker = str(data.get("tmp", ""))
        if not marker.startswith(tempfile.gettempdir() + "/topogen-emulate-"):
            continue  # not a state file of ours: touch nothing it names
        stop_pids(sorted(set(data.get("daemons", [])) | set(pids_naming(marker))), marker, errors)
        names = [n for n in data.get("namespaces", []) if str(n).startswith(f"tg{data.get('pid')}") and Path(f"/run/netns/{n}").exists()]
        if names:
            _ip([], "".join(f"netns del {n}\n" for n in names), check=False)
        shutil.rmtree(marker, ignore_errors=True)
        f.unlink(missing_ok=True)
        notes.append(f"removed the leftovers of an interrupted emulation (pid {data.get('pid')}): {len(names)} namespaces")
    return notes


# ---------------------------------------------------------------- talking to FRR


def vty(sock: Path, command: str, timeout: float = 10.0) -> str:
    """One command on a daemon's vty socket (the protocol vtysh speaks): its output."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(sock))
        s.sendall(command.encode() + b"\0")
        buf = bytearray()
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
            if len(buf) >= 4 and buf[-4:-1] == b"\0\0\0":
                break
    return buf[:-4].decode(errors="replace")


def vty_json(sock: Path, command: str) -> dict:
    text = vty(sock, command)
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return {}


# ---------------------------------------------------------------- ICMP from inside namespaces

_libc = ctypes.CDLL(None, use_errno=True)


def socket_in(ns: str) -> socket.socket:
    """A raw ICMP socket living in namespace ``ns`` (made there by setns, this thread back home after)."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {ns}")
        try:
            return socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(home)
        os.close(target)


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ping_pairs(pairs: list[tuple[Host, Host]], tries: int = 3, wait_s: float = 1.0) -> set[int]:
    """Indices of the pairs whose echo request came back (each source sends from its own namespace)."""
    socks: dict[str, socket.socket] = {}
    try:
        for src, _ in pairs:
            if src.ns not in socks:
                socks[src.ns] = socket_in(src.ns)
                socks[src.ns].setblocking(False)
        ok: set[int] = set()
        for _ in range(tries):
            todo = [i for i in range(len(pairs)) if i not in ok]
            if not todo:
                break
            for i in todo:
                src, dst = pairs[i]
                ident, seq = (i >> 16) & 0xFFFF, i & 0xFFFF
                head = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
                payload = b"topogen"
                pkt = struct.pack("!BBHHH", 8, 0, _checksum(head + payload), ident, seq) + payload
                try:
                    socks[src.ns].sendto(pkt, (dst.ip, 0))
                except OSError:
                    pass
            end = time.monotonic() + wait_s
            by_fd = {s.fileno(): (ns, s) for ns, s in socks.items()}
            while time.monotonic() < end and len(ok) < len(pairs):
                r, _, _ = select.select(list(by_fd), [], [], max(0.0, end - time.monotonic()))
                for fd in r:
                    ns, s = by_fd[fd]
                    while True:
                        try:
                            data, addr = s.recvfrom(2048)
                        except BlockingIOError:
                            break
                        ihl = (data[0] & 0x0F) * 4
                        typ, _, _, ident, seq = struct.unpack("!BBHHH", data[ihl : ihl + 8])
                        i = (ident << 16) | seq
                        if typ == 0 and i < len(pairs) and pairs[i][0].ns == ns and pairs[i][1].ip == addr[0]:
                            ok.add(i)
        return ok
    finally:
        for s in socks.values():
            s.close()


# ---------------------------------------------------------------- the run


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


class Emulation:
    """One run: the lab, the resources it made, the checks."""

    def __init__(self, lab: Lab, timeout_s: float, progress: Callable[[str], None]):
        self.lab = lab
        self.timeout_s = timeout_s
        self.progress = progress
        self.res = Resources(f"{os.getpid()}")
        tag = f"tg{os.getpid()}"
        for i, r in enumerate(lab.routers):
            r.ns = f"{tag}s{i}"
        for i, h in enumerate(lab.hosts):
            h.ns = f"{tag}g{i}"
        self.router_of_port = {(p.device, p.name): r for r in lab.routers for p in r.ports}
        self.host_of_port = {(h.gpu, h.nic): h for h in lab.hosts}
        self._widths: dict[frozenset, dict] = {}
        self.report = Report(lab.arch, len(lab.configs), len(lab.routers), lab.gpus_total, len(lab.hosts), 0)

    def fail(self, text: str) -> None:
        self.report.failures.append(text)

    # -- set-up

    def lint(self) -> None:
        """Each router's BGP section against the plan (addressing.csv): its ASN, one neighbour per fabric port with the peer's ASN."""
        for r in self.lab.routers:
            problems = bgp_mismatches(r, self.lab.roles, {x.name: x.asn for x in self.lab.routers})
            for t in problems[:10]:
                self.fail(f"configuration: {t}")

    def dry_run(self) -> None:
        """``vtysh --dryrun`` on every switch's file as built that is not loaded unchanged (split into VRFs)."""
        split = sorted({r.switch for r in self.lab.routers if r.vrf})
        for s in split:
            res = subprocess.run(["vtysh", "--dryrun", "-f", str(self.lab.configs[s])], capture_output=True, text=True)
            if res.returncode != 0:
                self.fail(f"{s}: FRR refuses its frr.conf: {(res.stdout + res.stderr).strip()[:500]}")

    def wire(self) -> None:
        lab = self.lab
        self.res.add_namespaces([r.ns for r in lab.routers] + [h.ns for h in lab.hosts])
        lines = []
        for a, ap, z, zp in lab.cables:
            ea, ez = self._end(a, ap), self._end(z, zp)
            if ea is None or ez is None:
                continue
            lines.append(f"link add {ap} netns {ea} type veth peer name {zp} netns {ez}\n")
        self.report.cables = len(lines)
        _ip([], "".join(lines))
        for r in lab.routers:
            cmds = ["link set lo up\n"]
            bridges: dict[str, list[str]] = {}
            for p in r.ports:
                if self._end(p.peer, p.peer_port) is None:
                    continue
                if p.vlan and p.address == "" and lab.roles.get(p.peer) == "gpu":
                    bridges.setdefault(f"vlan{p.vlan}", []).append(p.name)
                cmds.append(f"link set {p.name} up\n")
            for br, members in bridges.items():
                cmds.append(f"link add {br} type bridge\n")
                cmds += [f"link set {m} master {br}\n" for m in members]
                cmds.append(f"link set {br} up\n")
            _ip(["-n", r.ns], "".join(cmds))
            subprocess.run(["ip", "netns", "exec", r.ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"], check=True, capture_output=True)
        for h in lab.hosts:
            _ip(["-n", h.ns], f"link set lo up\nlink set {h.nic} up\naddr add {h.address} dev {h.nic}\nroute add {h.route} via {h.gateway} dev {h.nic}\n")

    def _end(self, dev: str, port: str) -> str | None:
        r = self.router_of_port.get((dev, port))
        if r is not None:
            return r.ns
        h = self.host_of_port.get((dev, port))
        return h.ns if h is not None else None

    def start_frr(self) -> None:
        for r in self.lab.routers:
            d = self.res.tmp / r.ns
            d.mkdir()
            shutil.chown(d, "frr", "frr")
            (d / "frr.conf").write_text(r.config)
            (d / "empty.conf").write_text("")
            for daemon in DAEMONS:
                cmd = ["ip", "netns", "exec", r.ns, str(FRR_DIR / daemon), "-N", r.ns, "--vty_socket", str(d), "-i", str(d / f"{daemon}.pid"), "-f", str(d / "empty.conf"), "-P", "0", "--log", f"file:{d / daemon}.log", "-z", str(d / "zserv.api")]
                if daemon == "bfdd":
                    cmd += ["--bfdctl", str(d / "bfdd.sock")]
                self.res.start(cmd, d / f"{daemon}.out")
        end = time.monotonic() + 30
        pending = list(self.lab.routers)
        while pending and time.monotonic() < end:
            pending = [r for r in pending if not all((self.res.tmp / r.ns / f"{dm}.vty").exists() for dm in DAEMONS)]
            time.sleep(0.1)
        if pending:
            raise RuntimeError(f"FRR did not start in {pending[0].name} (see its logs)")
        loads = []
        for r in self.lab.routers:  # every router's file at once: no router waits for the one before
            d = self.res.tmp / r.ns
            loads.append((r, self.res.start(["vtysh", "--vty_socket", str(d), "-f", str(d / "frr.conf")])))
        for r, proc in loads:
            out, _ = proc.communicate()
            errs = [ln for ln in out.splitlines() if "Unknown command" in ln or ln.startswith("% ") or "line " in ln and "%" in ln]
            if proc.returncode != 0 or errs:
                self.fail(f"{r.name}: FRR refused lines of its frr.conf: {'; '.join(errs[:3]) or out.strip()[:300]}")

    def sock(self, r: Router, daemon: str) -> Path:
        return self.res.tmp / r.ns / f"{daemon}.vty"

    # -- state

    def sessions(self) -> dict[str, dict[str, str]]:
        """Router name -> {peer: state} from bgpd."""
        out = {}
        for r in self.lab.routers:
            data = vty_json(self.sock(r, "bgpd"), "show bgp summary json")
            peers = (data.get("ipv4Unicast") or {}).get("peers", {})
            out[r.name] = {p: v.get("state", "?") for p, v in peers.items()}
        return out

    def expected_sessions(self, r: Router) -> list[Port]:
        return [p for p in r.ports if self.lab.roles.get(p.peer, "gpu") != "gpu"]

    def leaf_routes(self, r: Router) -> dict[str, int]:
        """Prefix -> next hops in the kernel (FIB) of router ``r``, from zebra."""
        data = vty_json(self.sock(r, "zebra"), "show ip route json")
        out = {}
        for prefix, entries in data.items():
            for e in entries:
                if e.get("selected"):
                    out[prefix] = sum(1 for nh in e.get("nexthops", []) if nh.get("fib"))
        return out

    def targets(self, r: Router) -> list[Host]:
        """Sampled GPUs leaf ``r`` should route to over its uplinks (not its own; rail-only: its rails only)."""
        local = {(p.peer, p.peer_port) for p in r.ports}
        rails = None
        if self.lab.arch == "rail-only":
            rails = {h.rail for h in self.lab.hosts if h.leaf == r.switch and (h.gpu, h.nic) in local} or None
        return [h for h in self.lab.hosts if (h.gpu, h.nic) not in local and (rails is None or h.rail in rails)]

    def widths(self, down: set[tuple[str, str]] = frozenset()) -> dict[tuple[str, str], int]:
        """ECMP width BGP should give each leaf toward each other leaf: ``(leaf, target leaf) -> next hops``.

        Valley-free shortest paths on the cabled routers (what eBGP with RFC 7938
        ASNs computes): a switch above the target reaches it down; any other goes
        up to the nearest such switch. A leaf's width is the number of its uplink
        ports toward upper switches at the least distance (parallel links count,
        each is a session). ``down``: ``(router, port)`` of links taken down.
        """
        lab = self.lab
        rank = {r.name: _role_rank(r.role) for r in lab.routers}
        up: dict[str, list[tuple[str, str]]] = {r.name: [] for r in lab.routers}  # router -> [(upper router, port)]
        for r in lab.routers:
            for p in r.ports:
                peer = self.router_of_port.get((p.peer, p.peer_port))
                if peer is None or (r.name, p.name) in down or (peer.name, p.peer_port) in down:
                    continue
                if rank[peer.name] > rank[r.name]:
                    up[r.name].append((peer.name, p.name))
        leaves = [r.name for r in lab.routers if r.role == "leaf"]
        order = sorted(up, key=lambda n: -rank[n])  # top tier first
        out = {}
        for t in leaves:
            dist = {t: 0}
            frontier = [t]
            while frontier:  # ancestors of t: reach it going down
                nxt = []
                for x in frontier:
                    for y, _ in up[x]:
                        if y not in dist:
                            dist[y] = dist[x] + 1
                            nxt.append(y)
                frontier = nxt
            for x in order:  # the others go up first
                if x not in dist:
                    ds = [dist[y] for y, _ in up[x] if y in dist]
                    if ds:
                        dist[x] = 1 + min(ds)
            for leaf in leaves:
                if leaf == t:
                    continue
                ds = [dist[y] for y, _ in up[leaf] if y in dist]
                out[(leaf, t)] = 0 if not ds else sum(1 for y, _ in up[leaf] if dist.get(y) == min(ds))
        return out

    def ecmp_gaps(self, down: set[tuple[str, str]] = frozenset()) -> list[str]:
        """Leaf routes to sampled GPUs that are missing or not at the width :meth:`widths` gives."""
        gaps = []
        key = frozenset(down)
        if key not in self._widths:
            self._widths[key] = self.widths(down)
        width = self._widths[key]
        leaf_of = {(h.gpu, h.nic): self.router_of_port[(h.leaf, h.leaf_port)].name for h in self.lab.hosts if (h.leaf, h.leaf_port) in self.router_of_port}
        for r in self.lab.routers:
            if r.role != "leaf" or not r.uplinks(self.lab.roles):
                continue
            routes = self.leaf_routes(r)
            for h in self.targets(r):
                want = width.get((r.name, leaf_of.get((h.gpu, h.nic), "")), 0)
                net = str(ipaddress.ip_interface(h.address).network)
                got = routes.get(net, 0)
                if got != want:
                    gaps.append(f"{r.name}: {net} ({h.gpu}) has {got} next hops, expected {want}")
        return gaps

    def full_width(self) -> list[str]:
        """Every leaf's width toward every other leaf of its rails equals its uplinks (a non-blocking Clos)."""
        width = self.widths()
        bad = []
        for r in self.lab.routers:
            ups = len(r.uplinks(self.lab.roles))
            for (leaf, t), w in width.items():
                if leaf == r.name and ups and w != ups and self._same_domain(leaf, t):
                    bad.append(f"{leaf} -> {t}: {w} equal-cost uplinks of {ups}")
        return bad

    def _same_domain(self, a: str, b: str) -> bool:
        """Both leaves route to each other (rail-only: a common rail)."""
        if self.lab.arch != "rail-only":
            return True
        rails = {}
        for h in self.lab.hosts:
            rr = self.router_of_port.get((h.leaf, h.leaf_port))
            if rr is not None:
                rails.setdefault(rr.name, set()).add(h.rail)
        return bool(rails.get(a, set()) & rails.get(b, set()))

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
        """(pairs that must reach, pairs that must not) among the sampled GPUs."""
        reach, apart = [], []
        for a in self.lab.hosts:
            for b in self.lab.hosts:
                if a is b:
                    continue
                if self.lab.arch == "rail-only" and a.rail != b.rail:
                    apart.append((a, b))
                else:
                    reach.append((a, b))
        return reach, apart

    def route_get(self, ns: str, dests: list[str]) -> dict[str, str]:
        """``ip route get`` of each destination in ``ns``: dest -> the route line (absent: no route)."""
        res = _ip(["-o", "-n", ns], "".join(f"route get {d}\n" for d in dests), check=False)
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
        self.report.ecmp_checked = sum(len(self.targets(r)) for r in self.lab.routers if r.role == "leaf" and r.uplinks(self.lab.roles))
        for g in gaps[:20]:
            self.fail(f"ECMP: {g}")

    def link_flap(self) -> None:
        """Take the first leaf uplink down (leaves with two or more uplinks), check, bring it back."""
        leaf = next((r for r in self.lab.routers if r.role == "leaf" and len(r.uplinks(self.lab.roles)) >= 2 and self.targets(r)), None)
        if leaf is None:
            self.report.link_down = "none (no leaf with two uplinks)"
            return
        port = leaf.uplinks(self.lab.roles)[0]
        up = len(leaf.uplinks(self.lab.roles))
        self.report.link_down = f"{leaf.name} {port.name} -> {port.peer}:{port.peer_port}"
        _ip(["-n", leaf.ns, "link", "set", port.name, "down"])
        down = {(leaf.name, port.name)}
        narrow = [w for (a, t), w in self.widths(down).items() if a == leaf.name and self._same_domain(a, t)]
        if any(w != up - 1 for w in narrow):
            self.fail(f"link down: {leaf.name} should route over {up - 1} uplinks, the cabling gives {sorted(set(narrow))}")
        t, left = self.wait("down", lambda: self.ecmp_gaps(down))
        self.report.reconverge_down_s = t
        for g in left[:10]:
            self.fail(f"link down: {g}")
        mine = [h for h in self.lab.hosts if h.leaf == leaf.switch]
        self.check_reach([(a, b) for a in mine for b in self.targets(leaf)], "with the link down")
        self.report.ecmp_narrowed = len(narrow)
        _ip(["-n", leaf.ns, "link", "set", port.name, "up"])
        t, left = self.wait("up", lambda: self.sessions_down() + self.ecmp_gaps())
        self.report.reconverge_up_s = t
        for g in left[:10]:
            self.fail(f"link back up: {g}")

    def run(self) -> Report:
        p = self.progress
        p(f"{self.lab.arch}: {len(self.lab.routers)} routers ({len(self.lab.configs)} switches), {len(self.lab.hosts)} of {self.lab.gpus_total} GPU NICs")
        self.lint()
        self.dry_run()
        p("namespaces and cables")
        self.wire()
        p("starting FRR")
        t0 = time.monotonic()
        self.start_frr()
        self.report.load_s = time.monotonic() - t0
        p("waiting for convergence")
        t, left = self.wait("converge", lambda: self.sessions_down() + self.ecmp_gaps())
        self.report.converge_s = None if t is None else time.monotonic() - t0
        if left:
            self.fail(f"no convergence within {self.timeout_s:.0f} s")
        p("checking sessions, reachability, ECMP, rails")
        self.check_sessions()
        reach, apart = self.pairs()
        self.check_reach(reach, "reach")
        if apart:
            self.check_apart(apart)
        self.check_ecmp()
        if not self.report.failures:
            p("link down and back up")
            self.link_flap()
        else:
            self.report.link_down = "none (the fabric failed the checks above)"
        return self.report


def run(build: Path, arch: str | None = None, max_gpus: int = 64, timeout_s: float = 60.0, progress: Callable[[str], None] | None = None, notes: list[str] | None = None) -> Report:
    """Emulate one architecture of ``build`` (see the module docstring); always removes what it made."""
    step = progress or (lambda _t: None)
    problems = environment_problems()
    if problems:
        raise InputError(problems)
    lab = load_lab(Path(build), arch, max_gpus)
    problems = capacity_problems(lab)
    if problems:
        raise InputError(problems)
    for n in remove_leftovers():
        (notes if notes is not None else []).append(n)
    emu = None
    try:
        emu = Emulation(lab, timeout_s, step)
        return emu.run()
    finally:
        if emu is not None:
            step("cleaning up")
            held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})  # a second Ctrl-C waits until all is removed
            try:
                errors = emu.res.cleanup()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            if errors:
                emu.report.failures += [f"clean-up: {e}" for e in errors]
