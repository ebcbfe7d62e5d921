"""The all-to-all of an MoE dispatch: every GPU sends the same bytes to every other GPU.

Up to :data:`EXACT_GPUS` GPUs every ordered pair is a flow. Beyond, the
pairs are aggregated (see :func:`pairs`).
"""

from __future__ import annotations

import numpy as np

from ..model import Fabric
from .patterns import Pairs

EXACT_GPUS = 2048


def pairs(fabric: Fabric) -> tuple[Pairs, str]:
    """Every ordered GPU pair (no GPU to itself), and a note saying how the all-to-all is modelled."""
    n = fabric.gpus
    g = np.arange(n, dtype=np.int64)
    src = np.repeat(g, n - 1)
    off = np.tile(np.arange(1, n, dtype=np.int64), n)
    dst = (src + off) % n
    return Pairs(src, dst, np.ones(len(src))), f"all-to-all: every ordered pair of the {n:,} GPUs is a flow"
