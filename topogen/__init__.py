"""topogen: port-level scale-out fabrics for GPU clusters (rail-only and rail-optimized Clos)."""

__version__ = "0.1.0"
