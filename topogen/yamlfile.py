"""Reading a YAML input file (spec or catalog) with errors that name the file and the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .errors import InputError, Problem


def read_yaml(path: Path, field: str, label: str, missing: Problem) -> Any:
    """Parse ``path``; a missing file raises ``missing``, other failures name ``label`` and the line.

    ``field`` is the input path the problems are reported under (``spec``, ``catalog``).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError([missing]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError([Problem(field, f"cannot read {label}: {exc}", "give a readable UTF-8 YAML file")]) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        ctx_mark = getattr(exc, "context_mark", None)
        if ctx_mark is not None and getattr(exc, "context", None) and (not mark or ctx_mark.line != mark.line):
            where += f" ({exc.context} at line {ctx_mark.line + 1})"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError([Problem(field, f"YAML syntax error in {label}{where}: {problem}", "fix the YAML syntax")]) from None
