"""Known answers for search tests: every buildable design of a space, built explicitly one by one."""

from __future__ import annotations

from typing import Any, Iterator

from topogen.search import run, screen, space
from topogen.search.explicit import build_design


def every_design(data: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """``(screened row with its spec, explicit figures)`` of each design of the search ``data`` (constraints dropped); skipped designs left out."""
    s = space.parse({**data, "search": {**data["search"], "constraints": {}}}, {})
    scr = screen.Screener(s, run.load_catalogs(s))
    for i, o in enumerate(space.points(s, scr.catalogs)[0]):
        row = scr.screen(i, o)
        if "skipped" in row:
            continue
        scr.materialize(row)
        yield row, build_design(row["spec"])
