"""``<arch>/sonic/<folder>/<switch>.config_db.json``: SONiC's configuration of every switch (:mod:`topogen.config.sonic`)."""

from __future__ import annotations

from pathlib import Path

from topogen.config import sonic
from topogen.exports.switch_configs import switch_files


def export(ctx, dest: Path) -> list[Path]:
    return switch_files.write(ctx, dest, "sonic", lambda name: f"{name}.config_db.json", sonic.generate_texts)
