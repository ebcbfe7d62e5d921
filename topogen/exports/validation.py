"""``<arch>/validation.json``: the validator's report of one architecture.

Keys: ``generator``, ``spec_sha256``, ``spec`` (name), ``arch``, ``source``
(the file validated, empty for a build), ``valid``, ``errors``, ``warnings``,
``infos``, ``checks`` (one entry per check group: ``group``, ``number``,
``title``, ``status`` pass/warning/error, ``detail``), ``figures`` (tiers,
worst-case hops, oversubscription per tier, bisection, failure impact...),
``not_listed`` (findings counted but not listed, per check id) and
``findings`` (``check``, ``severity``, ``devices``, ``ports``, ``cables``,
``message``, ``hint``). See :mod:`topogen.checks.validate` for the check ids.
"""

from __future__ import annotations

import json
from pathlib import Path

from topogen.exports.files import per_arch, write_output_text


def generate_json(report) -> str:
    """The file's text: deterministic (insertion-ordered keys, no timestamps)."""
    return json.dumps(report.to_dict(), indent=2) + "\n"


def write_report(report, path: Path) -> None:
    write_output_text(path, generate_json(report))


def export(ctx, dest: Path) -> list[Path]:
    return per_arch(ctx.reports, dest, "validation.json", write_report)
