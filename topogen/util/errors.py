"""Errors that reach the user as a clear message and exit code 2.

Library code raises :class:`InputError` with every :class:`Problem` it found;
the CLI renders them. Nothing here prints or exits.
"""

from __future__ import annotations

import difflib
import reprlib
from dataclasses import dataclass
from typing import Any

from topogen.util.interrupts import Interrupted  # noqa: F401  (SIGINT/SIGTERM; it lives beside its handler)


class _Short(reprlib.Repr):
    """``repr`` cut to a readable length at every level: no input value can blow up a message."""

    def __init__(self):
        super().__init__()
        self.maxlevel, self.maxlist, self.maxtuple, self.maxdict, self.maxset = 3, 6, 6, 6, 6
        self.maxstring, self.maxother = 60, 60

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 128:  # repr() of a huge int is slow, and refused past 4,300 digits
            return f"<an integer of about {int(x.bit_length() * 0.30103):,} digits>"
        return repr(x)


_SHORT = _Short()


def show(value: Any) -> str:
    """A value as error messages quote it: its ``repr``, truncated (strings, lists, deep nesting)."""
    return _SHORT.repr(value)


MAX_TEXT = 800  # characters of a problem's message or hint; longer text is cut in the middle


def cut(text: str, limit: int) -> str:
    """``text`` at most about ``limit`` characters: its head and tail, and how much was left out."""
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[-(limit // 4) :]
    return f"{head} … ({len(text) - len(head) - len(tail):,} characters cut) … {tail}"


@dataclass(frozen=True, slots=True)
class Problem:
    """One bad input: where (a field path such as ``radix`` or ``switches[2].price``), what, and a hint."""

    path: str
    message: str
    hint: str = ""
    suggests: str = ""  # an unknown key's: the path of the key it probably meant (that key is then not also "required")

    def __post_init__(self) -> None:
        """Every field is cut to a readable length, whatever value a message quoted in full."""
        for name, limit in (("path", 200), ("message", MAX_TEXT), ("hint", MAX_TEXT)):
            text = getattr(self, name)
            if len(text) > limit:
                object.__setattr__(self, name, cut(text, limit))

    def render(self) -> str:
        text = f"{self.path}: {self.message}"
        return f"{text}; {self.hint}" if self.hint else text


def _folded(key: str) -> str:
    return key.strip().lower().replace("-", "_").replace(" ", "_")


def did_you_mean(key: Any, allowed: tuple[str, ...]) -> str | None:
    """The allowed key a mistyped ``key`` most likely meant, or None.

    The same key but for case, ``-`` or blanks (``hb-domain``: ``hb_domain``), else
    the closest by :func:`difflib.get_close_matches` (``radixx``: ``radix``).
    """
    k = _folded(str(key))[:100]
    for a in allowed:
        if _folded(a) == k:
            return a
    close = difflib.get_close_matches(k, allowed, n=1, cutoff=0.75)
    return close[0] if close else None


def unknown_key(key: Any, allowed: tuple[str, ...], path: str, what: str = "key") -> Problem:
    """The problem of an unknown key ``<path>.<key>``: what it probably meant, then every allowed key."""
    guess = did_you_mean(key, allowed)
    hint = (f"did you mean {guess}? " if guess else "") + f"allowed keys: {', '.join(allowed)}"
    where = f"{path}." if path else ""
    return Problem(f"{where}{key}", f"unknown {what} {show(key)}", hint, suggests=f"{where}{guess}" if guess else "")


def unknown_keys(data, allowed: tuple[str, ...], path: str, problems: list[Problem]) -> None:
    """Report every key of the mapping ``data`` not in ``allowed``, as ``<path>.<key>``, sorted."""
    for key in sorted(str(k) for k in data if k not in allowed):
        problems.append(unknown_key(key, allowed, path))


def check_section(raw, allowed: tuple[str, ...], path: str, problems: list[Problem]) -> bool:
    """A nested input section (``workload:``, ``layout:``...): a mapping of allowed keys.

    Reports a non-mapping or unknown keys into ``problems``; False when ``raw`` is not a
    mapping at all (nothing more can be read from it).
    """
    if not isinstance(raw, dict):
        problems.append(Problem(path, f"{path.rsplit('.', 1)[-1]} must be a mapping, got {show(raw)}", f"keys: {', '.join(allowed)}"))
        return False
    unknown_keys(raw, allowed, path, problems)
    return True


class InputError(Exception):
    """Bad user input (spec, catalog, cabling file, output location); exit code 2."""

    def __init__(self, problems: list[Problem]):
        meant = {p.suggests for p in problems if p.suggests}  # "hb-domain: did you mean hb_domain?" says it: no "hb_domain is required" too
        self.problems = [p for p in problems if not (p.path in meant and p.message.endswith(" is required"))]
        super().__init__("\n".join(p.render() for p in self.problems))

    def __reduce__(self):
        """Pickle by the problems (an exporter's error crosses back from a worker process)."""
        return (type(self), (self.problems,))

    def render(self) -> str:
        n = len(self.problems)
        head = "error: " if n == 1 else f"error: {n} problems in the input:\n  "
        sep = "\n  "
        return head + sep.join(p.render() for p in self.problems)
