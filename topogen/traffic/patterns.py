"""Traffic patterns: which GPU sends to which, as arrays of (source, destination) pairs.

GPU ``g`` is rank ``g % K`` of HB domain ``g // K`` (K the HB-domain size, D
the domains). Every pattern is deterministic; the random ones draw from a
generator built on ``--seed``-style number ``key`` so a run is repeatable.

* ``ring-allreduce``: GPU (d, r) sends to (d+1 mod D, r): the inter-domain
  ring of a rail-aligned all-reduce, as NCCL runs it (every rank of a domain
  in its own ring, on its own rail).
* ``shift:S``: GPU (d, r) sends to (d+S mod D, r).
* ``permutation``: one random cycle through every GPU (each sends to one, and
  receives from one, other GPU; no GPU to itself).
* ``bisection``: the domains split into two halves at random; each domain of
  one half is paired with one of the other and their GPUs of equal rank send
  to each other, both ways (an odd domain out stays idle).
* ``alltoall``: every GPU to every other GPU (see :mod:`.alltoall` for how it is
  aggregated at scale).
* ``alltoall:G``: the expert-parallel all-to-all, every GPU to every other GPU of
  its group of G consecutive GPUs (whole HB domains when G >= K, inside one when
  G < K): the placement of an EP group of G, as Megatron and DeepSpeed lay it.
* ``matrix:FILE``: a CSV of ``src,dst,bytes`` (GPU names or ids).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

import numpy as np

from topogen.fabric.naming import GpuNames
from topogen.spec.workload import parse_number
from topogen.util.inputs import open_input

from topogen.util.errors import InputError, Problem

PATTERNS = ("ring-allreduce", "permutation", "shift:S", "bisection", "alltoall", "alltoall:G", "matrix:FILE")


@dataclass(frozen=True)
class Pattern:
    """A parsed ``--pattern``: its kind and argument (the shift, the matrix path)."""

    kind: str
    arg: str | int | None = None

    @property
    def label(self) -> str:
        return self.kind if self.arg is None else f"{self.kind}:{self.arg}"


@dataclass
class Pairs:
    """GPU pairs of a pattern; ``size`` is bytes per pair relative to the others (1.0 unless a matrix says)."""

    src: np.ndarray
    dst: np.ndarray
    size: np.ndarray
    bytes_max: float | None = None  # a matrix's largest pair in bytes (size is relative to it)


def parse(text: str) -> Pattern:
    """``--pattern`` text to a Pattern; InputError naming the field when it is not one."""
    kind, _, arg = text.strip().partition(":")
    if kind in ("ring-allreduce", "permutation", "bisection", "alltoall") and not arg:
        return Pattern(kind)
    if kind == "shift":
        s = int(arg) if ASCII_DIGITS.fullmatch(arg) else 0  # ASCII digits only: "shift:１" is no shift
        if s < 1:
            raise InputError([Problem("pattern", f"shift needs a whole number of domains of at least 1 (ASCII digits), got {text!r:.60}", "e.g. --pattern shift:1")])
        return Pattern("shift", s)
    if kind == "alltoall":
        g = int(arg) if arg.isdigit() and len(arg) <= 9 else 0
        if g < 2:
            raise InputError([Problem("pattern", f"alltoall:G needs a group of at least 2 GPUs, got {text!r:.60}", "e.g. --pattern alltoall:64 (the EP group), or alltoall for every GPU")])
        return Pattern("alltoall", g)
    if kind == "matrix" and arg:
        return Pattern("matrix", arg)
    raise InputError([Problem("pattern", f"unknown pattern {text!r:.60}", f"use one of {', '.join(PATTERNS)}")])


def pairs(pattern: Pattern, gpus: int, hb_domain: int, key: int) -> Pairs:
    """The (source, destination) GPU pairs of a generated pattern (not alltoall or matrix)."""
    k, D = hb_domain, gpus // hb_domain
    g = np.arange(gpus, dtype=np.int64)
    d, r = np.divmod(g, k)
    rng = np.random.default_rng(key)
    if pattern.kind in ("ring-allreduce", "shift"):
        s = 1 if pattern.kind == "ring-allreduce" else int(pattern.arg)
        if s % D == 0:
            raise InputError([Problem("pattern", f"shift:{s} sends every GPU to itself on {D} HB domain(s)", f"use a shift that is not a multiple of {D}")])
        src, dst = g, ((d + s) % D) * k + r
    elif pattern.kind == "permutation":
        order = rng.permutation(gpus)
        src, dst = order, np.roll(order, -1)
        if gpus < 2:
            src = dst = np.zeros(0, np.int64)
    elif pattern.kind == "bisection":
        doms = rng.permutation(D)
        half = D // 2
        a, b = doms[:half], doms[half : 2 * half]
        mate = np.full(D, -1, np.int64)
        mate[a], mate[b] = b, a
        keep = mate[d] >= 0
        src, dst = g[keep], mate[d[keep]] * k + r[keep]
    else:
        raise ValueError(pattern.kind)
    order = np.argsort(src, kind="stable")
    src, dst = np.asarray(src, np.int64)[order], np.asarray(dst, np.int64)[order]
    return Pairs(src, dst, np.ones(len(src)))


MAX_MATRIX_BYTES = 256 << 20
MAX_MATRIX_ROWS = 4_000_000
ASCII_DIGITS = re.compile(r"[0-9]{1,12}", re.ASCII)


def read_matrix(path, spec) -> Pairs:
    """A traffic matrix CSV: a ``src,dst,bytes`` header, then one row per GPU pair.

    GPUs are named as in cabling.csv (``hb00-gpu0``) or given as ids
    ``0 .. N-1``; bytes are positive numbers (``1e9`` and ``64M`` read too). A
    pair listed twice adds up. The file is at most 256 MiB and 4,000,000 rows,
    read in bounded memory; every bad row (up to 20) is named with its line.
    """
    label = repr(str(path))
    missing = Problem("pattern", f"matrix file {label} does not exist", "give --pattern matrix:PATH to a CSV of src,dst,bytes")
    with open_input(path, "pattern", f"matrix file {label}", MAX_MATRIX_BYTES, missing, what="traffic matrix") as fh:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 22), b""))  # counted before parsing: a file too long is refused in a second
        if lines > MAX_MATRIX_ROWS + 1:
            raise InputError([Problem("pattern", f"matrix file {label} has {lines:,} lines; a matrix holds at most {MAX_MATRIX_ROWS:,} rows", "aggregate the matrix (a row per GPU pair that talks), or use --pattern alltoall")])
        fh.seek(0)
        try:
            src, dst, size = _matrix_rows(csv.reader(io.TextIOWrapper(fh, encoding="utf-8-sig", newline="")), label, spec)
        except UnicodeDecodeError as exc:
            raise InputError([Problem("pattern", f"matrix file {label} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x})", "save it as UTF-8 CSV: src,dst,bytes")]) from None
        except csv.Error as exc:
            raise InputError([Problem("pattern", f"matrix file {label} is not CSV: {exc}", "save it as CSV: src,dst,bytes")]) from None
    s_, d_, z_ = np.asarray(src, np.int64), np.asarray(dst, np.int64), np.asarray(size)
    key, inv = np.unique(s_ * spec.gpus + d_, return_inverse=True)
    total = np.bincount(inv, weights=z_)
    return Pairs(key // spec.gpus, key % spec.gpus, total / total.max(), float(total.max()))


def _matrix_rows(rows, label: str, spec) -> tuple[list[int], list[int], list[float]]:
    """Sources, destinations and bytes of a matrix's rows; every bad row (up to 20) named with its line."""
    names = GpuNames.of(spec)
    problems: list[Problem] = []
    src: list[int] = []
    dst: list[int] = []
    size: list[float] = []

    def gpu(text: str) -> int | None:
        t = text.strip()
        if ASCII_DIGITS.fullmatch(t):  # ASCII digits only ("１" is no GPU id)
            v = int(t)
            return v if v < spec.gpus else None
        return names.parse(t)

    header = [h.strip().lower() for h in next(rows, [])]
    if header[:3] != ["src", "dst", "bytes"]:
        raise InputError([Problem("pattern", f"matrix file {label} starts with {','.join(header)[:60]!r}, not the header src,dst,bytes", "the first line is src,dst,bytes; then one GPU pair per line")])
    for line, r in enumerate(rows, 2):
        if len(src) >= MAX_MATRIX_ROWS:
            raise InputError([Problem("pattern", f"matrix file {label} has more than {MAX_MATRIX_ROWS:,} rows", "aggregate the matrix (a row per GPU pair that talks), or use --pattern alltoall")])
        if len(r) < 3:
            problems.append(Problem("pattern", f"matrix file {label} line {line}: {len(r)} field(s), expected src,dst,bytes", "one GPU pair per line"))
        else:
            a, b, s = gpu(r[0]), gpu(r[1]), parse_number(r[2].strip())
            if a is None or b is None:
                bad = r[0] if a is None else r[1]
                problems.append(Problem("pattern", f"matrix file {label} line {line}: {bad.strip()[:40]!r} is not a GPU of {spec.name} ({spec.gpus:,} GPUs)", "name GPUs as in cabling.csv (hb00-gpu0) or by id 0 .. N-1"))
            elif s is None or s <= 0:
                problems.append(Problem("pattern", f"matrix file {label} line {line}: bytes {r[2].strip()[:40]!r} is not a positive number", "e.g. 1048576 or 1M"))
            elif a == b:
                problems.append(Problem("pattern", f"matrix file {label} line {line}: a GPU sends to itself", "list pairs of two GPUs"))
            else:
                src.append(a)
                dst.append(b)
                size.append(s)
        if len(problems) >= 20:
            break
    if problems:
        raise InputError(problems)
    if not src:
        raise InputError([Problem("pattern", f"matrix file {label} lists no GPU pair", "one src,dst,bytes row per GPU pair")])
    return src, dst, size
