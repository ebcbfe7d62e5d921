"""Which GPU each adapter of a host serves: the order of ``mlx5_<n>`` on a node.

OFED describes an adapter ``<hostname> mlx5_<n>`` (the host name set by
provisioning, ``n`` the kernel's enumeration, in PCI order). Which GPU a given
``mlx5_<n>`` serves is a property of the system, the same on every node of a
model, so it is read, in this order:

1. an ``--adapters`` map: a system's name (``templates/systems/``: the ``hca`` of
   each compute port, :func:`layouts`) or a CSV file of lines ``mlx5_<n>,gpu<local
   index>`` (``#`` comments, an optional header ``adapter,gpu``);
2. learned from the floor: on hosts whose adapters are cabled to switches already
   known (by name or GUID), the wiring says which GPU each ``mlx5_<n>`` serves; the
   map most hosts agree on is the system's (a host that disagrees then has its
   cables crossed, and says so as a fault);
3. the numbers themselves: ``mlx5_<n>`` serves GPU ``n`` when every number a host
   shows is below its GPU count (topogen's host files number them so), the plan's
   system's layout (a DGX B200 plan: the DGX B200's), else a system's whose compute
   ports the numbers are, else the ``n``-th lowest number on the host serves GPU ``n``.

An adapter's port ``p`` is the GPU's NIC ``p - 1`` (one port per plane).
"""

from __future__ import annotations

import csv
import functools
import io
import re
from pathlib import Path

from topogen.spec import systems
from topogen.util.errors import InputError, Problem, show
from topogen.util.inputs import CONTROL_RE, open_input

MLX_RE = re.compile(r"^(?P<host>\S+) mlx5_(?P<n>[0-9]{1,4})$", re.ASCII)
GPU_LOCAL_RE = re.compile(r"^gpu(?P<g>[0-9]{1,4})$", re.ASCII)
MAX_MAP_BYTES = 1 << 20



@functools.lru_cache(maxsize=1)
def layouts() -> dict[str, dict[int, int]]:
    """``mlx5_<n>`` -> GPU of every bundled system whose compute ports all name their ``hca`` (one port a GPU).

    The systems' files say it (``templates/systems/dgx-h100.yaml``: mlx5_0, 3, 4, 5,
    6, 9, 10, 11 serve GPUs 0..7, from NVIDIA's DGX H100 User Guide; ``dgx-b200.yaml``).
    """
    out: dict[int, int] = {}
    found: dict[str, dict[int, int]] = {}
    for name in systems.names():
        s = systems.load(name)
        if s.compute and all(p.hca for p in s.compute) and len(s.compute) == s.gpus:
            out = {int(p.hca.rsplit("_", 1)[1]): p.gpu for p in s.compute}
            if len(out) == len(s.compute) and len(set(out.values())) == s.gpus:
                found[name] = out
    return found


def label(system: str) -> str:
    """A system's name as its maker writes it: ``dgx-b200`` -> ``DGX B200``."""
    return system.upper().replace("-", " ")


def adapter(device: str) -> tuple[str, int] | None:
    """``(host, n)`` of an adapter described the OFED way (``hb00 mlx5_7``), else None."""
    m = MLX_RE.match(" ".join(device.split()))
    return (m.group("host"), int(m.group("n"))) if m else None


def read_map(ref: str) -> dict[int, int]:
    """An ``--adapters`` map: a system (``dgx-h100``, ``dgx-b200``: :func:`layouts`) or a CSV of ``mlx5_<n>,gpu<i>`` lines.

    Every bad line is an InputError naming it (not two fields, not ``mlx5_<n>``,
    not ``gpu<i>``, an adapter given twice, a GPU given twice).
    """
    known = layouts()
    if ref in known:
        return dict(known[ref])
    hint = f"give a system ({', '.join(known)}) or a CSV of lines mlx5_<n>,gpu<i>"
    missing = Problem("--adapters", f"{show(ref)} is neither a known system nor a file", hint)
    with open_input(ref, "--adapters", show(ref), MAX_MAP_BYTES, missing, what="adapter map") as fh:
        try:
            text = fh.read().decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InputError([Problem("--adapters", f"{show(ref)} is not UTF-8 text", hint)]) from None
    where = Path(ref).name
    out: dict[int, int] = {}
    line_of: dict[int, int] = {}
    problems: list[Problem] = []
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error as exc:
        raise InputError([Problem(f"--adapters {where}", f"not a CSV file: {exc}", "write: mlx5_<n>,gpu<i>")]) from None
    for no, row in enumerate(rows, 1):
        cells = [c.strip() for c in row]
        if not cells or cells == [""] or cells[0].startswith("#"):
            continue
        if no == 1 and [c.lower() for c in cells] == ["adapter", "gpu"]:
            continue
        at = f"--adapters {where} line {no}"
        m = re.fullmatch(r"mlx5_([0-9]{1,4})", cells[0], re.ASCII) if len(cells) == 2 else None
        g = GPU_LOCAL_RE.match(cells[1]) if len(cells) == 2 else None
        if len(cells) != 2:
            problems.append(Problem(at, f"{len(cells)} field(s); a line is: mlx5_<n>,gpu<i>", "one adapter per line, two fields"))
        elif CONTROL_RE.search(cells[0] + cells[1]) or m is None:
            problems.append(Problem(at, f"{show(cells[0])} is not an adapter name", "write mlx5_<n> (as ibstat or /sys/class/infiniband lists it)"))
        elif g is None:
            problems.append(Problem(at, f"{show(cells[1])} is not a GPU of the node", "write gpu<i>, i the GPU's index in its node (0 first)"))
        elif int(m.group(1)) in out:
            problems.append(Problem(at, f"mlx5_{m.group(1)} is given again (line {line_of[int(m.group(1))]})", "map each adapter once"))
        elif int(g.group("g")) in out.values():
            problems.append(Problem(at, f"gpu{g.group('g')} is given again", "each GPU has its own adapter"))
        else:
            out[int(m.group(1))] = int(g.group("g"))
            line_of[int(m.group(1))] = no
        if len(problems) >= 20:
            break
    if problems:
        raise InputError(problems)
    if not out:
        raise InputError([Problem(f"--adapters {where}", "maps no adapter", "write one line mlx5_<n>,gpu<i> per compute adapter")])
    return out


def default_order(numbers: list[int], gpus: int, system: str | None = None) -> tuple[dict[int, int], str]:
    """The GPU of each ``mlx5_<n>`` of one host from its numbers alone, and the rule used (see the module).

    ``system``: the plan's system (:func:`topogen.spec.systems.for_spec`), whose
    layout is tried before the other systems'.
    """
    nums = sorted(set(numbers))
    if all(n < gpus for n in nums):
        return {n: n for n in nums}, "mlx5_<n> serves GPU n"
    known = layouts()
    fits = [k for k in ([system] if system in known else []) + [k for k in known if k != system] if gpus == len(known[k]) and all(n in known[k] for n in nums)]
    if fits:
        lay = known[fits[0]]
        alike = [k for k in fits if k == fits[0] or (system not in known and known[k] == lay)]
        return {n: lay[n] for n in nums}, f"the layout of the {' and the '.join(label(k) for k in alike)}"
    return {n: i for i, n in enumerate(nums)}, "mlx5_<n> in order of n"


def learn(votes: dict[int, dict[int, int]]) -> dict[int, int]:
    """The map most hosts agree on: ``votes[n][gpu]`` hosts whose wiring puts ``mlx5_<n>`` on GPU ``gpu``.

    An adapter number takes the GPU most hosts give it when more than half of the
    hosts that voted for it agree and at least two did; a GPU claimed by two numbers
    is left to neither. The result may be partial (numbers with no clear majority).
    """
    out: dict[int, int] = {}
    for n, by_gpu in votes.items():
        total = sum(by_gpu.values())
        gpu, top = max(sorted(by_gpu.items()), key=lambda kv: kv[1])
        if top >= 2 and 2 * top > total:
            out[n] = gpu
    taken: dict[int, int] = {}
    for g in out.values():
        taken[g] = taken.get(g, 0) + 1
    return {n: g for n, g in out.items() if taken[g] == 1}
