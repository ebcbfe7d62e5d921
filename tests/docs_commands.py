"""Find the commands of the documentation and run them as a reader would.

Two kinds of fenced block are commands:

- ```` ```console ````: lines starting with ``$ `` are commands, the lines after each one are its
  expected output (stdout and stderr together). A line ``...`` stands for any number of lines,
  and ``...`` inside a line for any text, for output too long or too variable to print.
- ```` ```sh ````: every line that is not blank or a comment is a command; only its exit status is
  checked. A trailing ``# comment`` is the reader's, not the shell's concern, and stays.

A command continues on the next line after a trailing backslash, and (in console blocks) on
lines starting with ``> ``, the shell's prompt inside an open quote. Every command must exit 0 (a
page that shows a failure writes ``; echo "exit $?"``). A block preceded by the comment
``<!-- docs-test: skip: REASON -->`` is not run; REASON names the test that covers it instead
(``tests/test_x.py``), and :func:`skipped_blocks` lets a test check that the file exists.

The README counts as a page. Pages run in order, each in a fresh directory holding links to the repository's ``templates``
and ``bench``,
so ``out/`` written by one command is there for the next. Progress lines that ``topogen build``
prints after 2 s (``topogen: [   4.6 s] manifest``) depend on the machine's speed and are dropped.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SKIP_RE = re.compile(r"<!--\s*docs-test:\s*skip:\s*(.*?)\s*-->", re.S)
FENCE_RE = re.compile(r"^(\s*)```(\w*)\s*$")
PROGRESS_RE = re.compile(r"^topogen: \[\s*[0-9.]+ s\] .*$")
ELLIPSIS = "..."
LINKED = ("templates", "bench")  # repository folders the pages' commands name, linked into their directory


@dataclass
class Command:
    """One command of a page, where it is written, and the output the page shows (console blocks)."""

    page: str
    line: int
    text: str
    expected: list[str] | None = None  # None: only the exit status is checked (sh blocks)


@dataclass
class Block:
    page: str
    line: int
    lang: str
    lines: list[str] = field(default_factory=list)
    skip: str | None = None


def pages() -> list[Path]:
    """Every Markdown page of the site, and the README, in a stable order."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """The fenced ``console`` and ``sh`` blocks of a page, with the skip reason written above each."""
    text = path.read_text(encoding="utf-8")
    out: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        start = i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        if lang not in ("console", "sh"):
            continue
        before = "\n".join(lines[max(0, start - 3):start])
        sm = SKIP_RE.search(before)
        out.append(Block(str(path.relative_to(ROOT)), start + 1, lang, body, sm.group(1) if sm else None))
    return out


def _join_continuations(lines: list[str], first: int) -> list[tuple[int, str]]:
    """Logical lines: a trailing backslash continues on the next line."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    at = first
    for n, line in enumerate(lines):
        if not buf:
            at = first + n
        if line.endswith("\\"):
            buf.append(line[:-1])
            continue
        buf.append(line)
        out.append((at, "\n".join(buf) if len(buf) == 1 else " ".join(b.strip() for b in buf)))
        buf = []
    if buf:
        out.append((at, " ".join(b.strip() for b in buf)))
    return out


def commands(block: Block) -> list[Command]:
    """The commands of one block, with expected output for console blocks."""
    first = block.line + 1
    if block.lang == "sh":
        return [Command(block.page, n, text) for n, text in _join_continuations(block.lines, first) if text.strip() and not text.lstrip().startswith("#")]
    out: list[Command] = []
    n = 0
    while n < len(block.lines):
        line = block.lines[n]
        if not line.startswith("$ "):
            raise ValueError(f"{block.page}:{first + n}: console output before any '$ ' command")
        parts = [line[2:]]
        at = first + n
        while parts[-1].endswith("\\"):
            parts[-1] = parts[-1][:-1]
            n += 1
            parts.append(block.lines[n].strip())
        text = " ".join(p.strip() for p in parts)
        n += 1
        while n < len(block.lines) and block.lines[n].startswith("> "):  # the shell's PS2: a quoted newline
            text += "\n" + block.lines[n][2:]
            n += 1
        expected = []
        while n < len(block.lines) and not block.lines[n].startswith("$ "):
            expected.append(block.lines[n])
            n += 1
        out.append(Command(block.page, at, text, expected))
    return out


def page_commands(path: Path) -> list[Command]:
    return [c for b in blocks(path) if b.skip is None for c in commands(b)]


def skipped_blocks() -> list[Block]:
    return [b for p in pages() for b in blocks(p) if b.skip is not None]


def environment(bin_dir: Path) -> dict[str, str]:
    """What a reader's shell has: topogen on PATH; fixed width and locale so output does not vary."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV_"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", COLUMNS="80", LC_ALL="C.UTF-8", PYTHONHASHSEED="0")
    return env


def run(cmd: Command, cwd: Path, env: dict[str, str], timeout: float = 300) -> tuple[int, str]:
    """Run one command in bash; stdout and stderr together, progress lines dropped, trailing spaces and blank lines cut."""
    res = subprocess.run(["bash", "-o", "pipefail", "-c", cmd.text], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    lines = [line.rstrip() for line in res.stdout.splitlines() if not PROGRESS_RE.match(line)]
    return res.returncode, "\n".join(lines).rstrip("\n")


def pattern(expected: list[str]) -> re.Pattern[str]:
    """A regex for the expected lines: ``...`` alone matches any lines, inside a line any text."""
    parts = []
    for line in (e.rstrip() for e in expected):
        if line.strip() == ELLIPSIS:
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        parts.append(".*?".join(re.escape(p) for p in line.split(ELLIPSIS)) + r"\n")
    return re.compile("".join(parts))


def matches(expected: list[str], actual: str) -> bool:
    """Whether the output (every line of it) is what the page shows."""
    while expected and not expected[-1].strip():
        expected = expected[:-1]
    text = actual + "\n" if actual else ""
    return pattern(expected).fullmatch(text) is not None
