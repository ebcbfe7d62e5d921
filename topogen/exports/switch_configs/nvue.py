"""``<arch>/nvue/<folder>/<switch>.startup.yaml``: Cumulus NVUE's configuration of every switch (:mod:`topogen.config.nvue`)."""

from __future__ import annotations

from pathlib import Path

from topogen.config import nvue
from topogen.exports.switch_configs import switch_files


def export(ctx, dest: Path) -> list[Path]:
    return switch_files.write(ctx, dest, "nvue", lambda name: f"{name}.startup.yaml", nvue.generate_texts)
