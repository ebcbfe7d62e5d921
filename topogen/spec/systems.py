"""System definitions: a compute node's chassis and its own ports (``templates/systems/<system>.yaml``).

A system file says what a node is on the floor and to its operating system:

* ``name``, ``description``, ``gpu`` (the GPU preset it carries: ``h100``, ``b200``), ``gpus``
  (GPUs per node), ``height_u`` (rack units);
* ``compute``: one entry per compute-fabric NIC port, in the node's port order: the ``gpu``
  (local index) it serves, its ``cage`` and ``port`` on the back of the node (1-based, as the
  chassis labels them), and where known the RDMA device ``hca`` (``mlx5_0``), the ``pci``
  address (``0000:18:00.0``) and the OS interface name ``os_name`` the kernel gives it
  (``enp24s0np0``, derived from the PCI address).

The host files use it: netplan matches each port by ``os_name`` and renames it to topogen's
interface name (``match:`` + ``set-name:``), and NCCL's ``NCCL_IB_HCA`` names its ``hca``. A
system is picked from the spec's ``workload: {gpu: ...}`` with ``gpus_per_node`` equal to its
``gpus`` (:func:`for_spec`). Unknown keys are refused, so a misspelt field never passes
silently; other networks' ports (in-band, storage, BMC) will go in sections of their own.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from topogen.spec.yamlfile import read_yaml
from topogen.util import resources
from topogen.util.errors import InputError, Problem, show, unknown_key

KEYS = ("name", "description", "gpu", "gpus", "height_u", "compute")
PORT_KEYS = ("gpu", "cage", "port", "hca", "pci", "os_name")
HCA_RE = re.compile(r"mlx5_[0-9]{1,3}")
PCI_RE = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
IFNAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,15}")  # Linux: at most 15 characters, no '/' or blank


@dataclass(frozen=True, slots=True)
class SystemPort:
    gpu: int
    cage: int
    port: int
    hca: str = ""
    pci: str = ""
    os_name: str = ""

    @property
    def label(self) -> str:
        """The port as the back of the node labels it: ``cage2/p1``."""
        return f"cage{self.cage}/p{self.port}"


@dataclass(frozen=True, slots=True)
class System:
    name: str
    description: str
    gpu: str
    gpus: int
    height_u: int
    compute: tuple[SystemPort, ...]

    @property
    def renames(self) -> bool:
        """Every compute port has an OS name to match (netplan ``match:`` + ``set-name:``)."""
        return bool(self.compute) and all(p.os_name for p in self.compute)


def names() -> list[str]:
    return resources.template_names("systems")


@functools.lru_cache(maxsize=16)
def load(name: str) -> System:
    """The bundled system ``name``; InputError naming the file and field when it is malformed."""
    path = resources.template_path("systems", name)
    if path is None:
        raise InputError([Problem("system", f"unknown system {show(name)}", f"bundled systems: {', '.join(names())}")])
    data = read_yaml(path, "system", f"system {name}", Problem("system", f"system {name} is missing", ""))
    return parse(data, f"system {name}")


def parse(data: Any, label: str) -> System:
    problems: list[Problem] = []

    def bad(where: str, message: str, hint: str) -> None:
        problems.append(Problem(f"{label}: {where}", message, hint))

    if not isinstance(data, dict):
        raise InputError([Problem(label, f"a system file is a mapping, got {show(data)}", "name: ..., gpus: 8, height_u: 8, compute: [...]")])
    for key in sorted(str(k) for k in data if k not in KEYS):
        p = unknown_key(key, KEYS, "")
        bad(key, p.message, p.hint)

    def whole(d: dict, key: str, where: str, required: bool = True) -> int:
        raw = d.get(key)
        if raw is None and not required:
            return 0
        if isinstance(raw, bool) or not isinstance(raw, int) or not 0 < raw <= 10_000:
            bad(f"{where}{key}", f"{key} must be a whole number from 1 to 10,000, got {show(raw)}", "e.g. 8")
            return 0
        return raw

    def text(d: dict, key: str, where: str, pattern: re.Pattern | None = None, required: bool = True, hint: str = "") -> str:
        raw = d.get(key)
        if raw is None and not required:
            return ""
        if not isinstance(raw, str) or not raw.strip() or (pattern is not None and not pattern.fullmatch(raw)):
            bad(f"{where}{key}", f"{key} must be {'text' if pattern is None else 'of the form ' + hint}, got {show(raw)}", hint or "give a text value")
            return ""
        return raw

    gpus = whole(data, "gpus", "")
    height = whole(data, "height_u", "")
    ports = []
    raw_ports = data.get("compute")
    if not isinstance(raw_ports, list) or not raw_ports:
        bad("compute", f"compute must be a non-empty list of ports, got {show(raw_ports)}", "e.g. compute: [{gpu: 0, cage: 1, port: 1}]")
    else:
        for i, d in enumerate(raw_ports):
            where = f"compute[{i}]."
            if not isinstance(d, dict):
                bad(f"compute[{i}]", f"a port is a mapping, got {show(d)}", "e.g. {gpu: 0, cage: 1, port: 1, hca: mlx5_0}")
                continue
            for key in sorted(str(k) for k in d if k not in PORT_KEYS):
                p = unknown_key(key, PORT_KEYS, "")
                bad(f"{where}{key}", p.message, p.hint)
            g = d.get("gpu")
            if isinstance(g, bool) or not isinstance(g, int) or not 0 <= g < max(gpus, 1):
                bad(f"{where}gpu", f"gpu must be a local GPU index from 0 to {max(gpus, 1) - 1}, got {show(g)}", "the GPU this port serves, 0-based")
                g = 0
            ports.append(
                SystemPort(
                    g,
                    whole(d, "cage", where),
                    whole(d, "port", where),
                    text(d, "hca", where, HCA_RE, False, "mlx5_<n>"),
                    text(d, "pci", where, PCI_RE, False, "dddd:bb:ss.f (lower-case hex)"),
                    text(d, "os_name", where, IFNAME_RE, False, "a Linux interface name: 1-15 letters, digits, '_', '.' or '-'"),
                )
            )
        seen: dict[tuple[int, int], int] = {}
        for i, p in enumerate(ports):
            if (p.cage, p.port) in seen:
                bad(f"compute[{i}]", f"cage {p.cage} port {p.port} is also compute[{seen[(p.cage, p.port)]}]", "each port of the node once")
            seen.setdefault((p.cage, p.port), i)
    sys_ = System(text(data, "name", ""), text(data, "description", "", required=False), text(data, "gpu", "", required=False), gpus, height, tuple(ports))
    if problems:
        raise InputError(problems)
    return sys_


def node_u(spec) -> int | None:
    """The height (U) of the spec's system (:func:`for_spec`), None for a generic node."""
    s = for_spec(spec)
    return s.height_u if s is not None else None


def for_spec(spec) -> System | None:
    """The system a spec's nodes are: the bundled one carrying its workload's GPU with ``gpus_per_node`` GPUs; None for a generic node."""
    if getattr(spec, "system", None):
        return load(spec.system)
    w = getattr(spec, "workload", None)
    gpu = getattr(getattr(w, "gpu", None), "name", "") if w is not None else ""
    if not gpu:
        return None
    per_node = getattr(spec, "gpus_per_node", None) or spec.hb_domain
    for name in names():
        s = load(name)
        if s.gpu == gpu and s.gpus == per_node and len(s.compute) == s.gpus * max(1, int(getattr(spec, "nic_ports", 1) or 1)):
            return s
    return None
