"""Which GPU each adapter of a host serves: the order of ``mlx5_<n>`` on a node.

OFED describes an adapter ``<hostname> mlx5_<n>`` (the host name set by
provisioning, ``n`` the kernel's enumeration, in PCI order). Which GPU a given
``mlx5_<n>`` serves is a property of the system, the same on every node of a
model, so it is read, in this order:

1. an ``--adapters`` map: a built-in system's name (:data:`SYSTEMS`) or a CSV file
   of lines ``mlx5_<n>,gpu<local index>`` (``#`` comments, an optional header
   ``adapter,gpu``);
2. learned from the floor: on hosts whose adapters are cabled to switches already
   known (by name or GUID), the wiring says which GPU each ``mlx5_<n>`` serves; the
   map most hosts agree on is the system's (a host that disagrees then has its
   cables crossed, and says so as a fault);
3. the numbers themselves: ``mlx5_<n>`` serves GPU ``n`` when every number a host
   shows is below its GPU count (topogen's host files number them so), the DGX H100
   layout when the numbers are its compute ports, else the ``n``-th lowest number on
   the host serves GPU ``n``.

An adapter's port ``p`` is the GPU's NIC ``p - 1`` (one port per plane).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from topogen.util.errors import InputError, Problem, show
from topogen.util.inputs import CONTROL_RE, open_input

MLX_RE = re.compile(r"^(?P<host>\S+) mlx5_(?P<n>[0-9]{1,4})$", re.ASCII)
GPU_LOCAL_RE = re.compile(r"^gpu(?P<g>[0-9]{1,4})$", re.ASCII)
MAX_MAP_BYTES = 1 << 20

# DGX H100: the eight ConnectX-7 compute ports (OSFP cages of the twin-port modules) are
# mlx5_0, 3, 4, 5, 6, 9, 10, 11 for GPUs 0..7; mlx5_1, 2, 7, 8 are the storage and
# in-band ports (NVIDIA DGX H100 User Guide, "Network Ports"; DGX SuperPOD H100 reference
# architecture, compute fabric).
SYSTEMS: dict[str, dict[int, int]] = {
    "dgx-h100": {0: 0, 3: 1, 4: 2, 5: 3, 6: 4, 9: 5, 10: 6, 11: 7},
}


def adapter(device: str) -> tuple[str, int] | None:
    """``(host, n)`` of an adapter described the OFED way (``hb00 mlx5_7``), else None."""
    m = MLX_RE.match(" ".join(device.split()))
    return (m.group("host"), int(m.group("n"))) if m else None


def read_map(ref: str) -> dict[int, int]:
    """An ``--adapters`` map: a built-in system (``dgx-h100``) or a CSV of ``mlx5_<n>,gpu<i>`` lines.

    Every bad line is an InputError naming it (not two fields, not ``mlx5_<n>``,
    not ``gpu<i>``, an adapter given twice, a GPU given twice).
    """
    if ref in SYSTEMS:
        return dict(SYSTEMS[ref])
    hint = f"give a system ({', '.join(SYSTEMS)}) or a CSV of lines mlx5_<n>,gpu<i>"
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


def default_order(numbers: list[int], gpus: int) -> tuple[dict[int, int], str]:
    """The GPU of each ``mlx5_<n>`` of one host from its numbers alone, and the rule used (see the module)."""
    nums = sorted(set(numbers))
    if all(n < gpus for n in nums):
        return {n: n for n in nums}, "mlx5_<n> serves GPU n"
    dgx = SYSTEMS["dgx-h100"]
    if gpus == len(dgx) and all(n in dgx for n in nums):
        return {n: dgx[n] for n in nums}, "the DGX H100 layout"
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
