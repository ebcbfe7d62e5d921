"""Stress reproduction for lost interrupts: Ctrl-C at random moments of a real 65,536-GPU build.

Not collected by pytest (a manual run of a few minutes; tests/test_outdir.py holds the
quick checks). Each try starts ``topogen build`` into a directory holding a previous
build, sends SIGINT to its process group (as a terminal's Ctrl-C does) at a random
moment ``--from``..``--to`` seconds after the start, and checks what a Ctrl-C must do:

* exit 130 with the one line ``topogen: interrupted (SIGINT); ...`` and no traceback;
* the previous output byte-identical (its manifest's hashes are checked);
* nothing else beside it: no ``.big.tmp-*``, marker or lock;
* no process of the group left (no orphaned exporter worker).

A try whose build completes (exit 0) is a lost interrupt. A signal sent while Python
itself starts, before topogen's first line (``--from`` below 0.1 s or so), ends the
build Python's way (exit -2, a ``KeyboardInterrupt`` traceback): reported, not lost. ``--trace`` runs the
program through a wrapper that records where each signal handler ran
(the Python stack), so a lost interrupt shows where it went::

    python tests/stress_interrupts.py --tries 60
    python tests/stress_interrupts.py --tries 60 --trace
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUILD = ["--gpus", "65536", "--hb-domain", "8", "--radix", "64", "--formats", "cabling,topology,xlsx,graphml"]
SAID = "topogen: interrupted (SIGINT); no partial output was left behind"
TRACER = """
import signal, sys, traceback
log = open(sys.argv.pop(1), "a")
set_handler = signal.signal
def logged_signal(signum, handler):
    if getattr(handler, "__name__", "") != "<lambda>":  # not the ones interrupts.held() puts in for a moment
        log.write(f"handler for {signum} installed\\n")
        log.flush()
    return set_handler(signum, handler)
signal.signal = logged_signal
import topogen.__main__ as m
from topogen.util import interrupts
log.write("program imported\\n")
log.flush()
def traced(signum, frame):
    log.write("handler ran at:\\n")
    log.flush()
    try:
        log.write("".join(traceback.format_stack(frame)) + "---\\n")
    except BaseException as exc:
        log.write(f"(no stack: {exc!r})\\n")
    log.flush()
    interrupts._received.append(signum)
    raise interrupts.Interrupted(signum)
interrupts.on_signal = traced
sys.argv[0] = "topogen"
m.run()
"""

FROM_SOURCE = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "Editable" not in getattr(f, "__name__", type(f).__name__)]
sys.path.insert(0, sys.argv.pop(1))
from topogen.__main__ import run
sys.argv[0] = "topogen"
run()
"""


def intact(out: Path) -> bool:
    """The previous build's files are all there, as its manifest hashed them, and nothing else."""
    manifest = json.loads((out / "manifest.json").read_text())
    listed = {f["path"]: f["sha256"] for f in manifest["files"]}
    present = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {"manifest.json"}
    if present != set(listed):
        return False
    return all(hashlib.sha256((out / rel).read_bytes()).hexdigest() == sha for rel, sha in listed.items())


def group_left(pgid: int, wait_s: float = 5.0) -> list[str]:
    """Processes (not zombies) of process group ``pgid`` still there after up to ``wait_s``: their command lines."""
    end = time.monotonic() + wait_s
    while True:
        left = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:80]
            except (OSError, IndexError):
                continue
            if fields[0] != "Z" and int(fields[2]) == pgid:
                left.append(f"{d.name} {cmd}")
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tries", type=int, default=60)
    ap.add_argument("--from", dest="lo", type=float, default=0.2, help="earliest moment of the SIGINT, s after the start")
    ap.add_argument("--to", dest="hi", type=float, default=1.6, help="latest moment of the SIGINT, s after the start")
    ap.add_argument("--draw", type=int, default=1, help="random draw of the moments")
    ap.add_argument("--trace", action="store_true", help="record the Python stack where each signal handler ran")
    ap.add_argument("--slow", type=float, default=3.0, help="an exit later than this after the signal is reported as slow (with --trace: where the handler ran)")
    ap.add_argument("--full", action="store_true", help="print the whole stderr of a failed try (default: its last 12 lines)")
    ap.add_argument("--source", help="run topogen from this source tree (e.g. an older commit: git archive COMMIT topogen | tar -x -C DIR)")
    ap.add_argument("--jobs", help="--jobs of the build (default: topogen's)")
    args = ap.parse_args()
    # The builds start with SIGINT at its default, as from a terminal: started from a
    # background job (`cmd &` in a script, CI) this process ignores SIGINT, and so would
    # the builds until topogen sets its handler (a signal in their first ~0.1 s, while
    # Python starts, would be ignored, not lost by topogen).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rng = random.Random(args.draw)
    build = BUILD + (["--jobs", args.jobs] if args.jobs else [])
    failures: dict[str, int] = {}
    slow_tries = 0
    with tempfile.TemporaryDirectory(prefix="topogen-sigint-") as d:
        root = Path(d)
        out = root / "big"
        first = subprocess.run([sys.executable, "-m", "topogen", "build", *build, "--out", str(out)], cwd=root, capture_output=True, text=True)
        if first.returncode != 0:
            sys.stderr.write(first.stderr)
            return 2
        for i in range(args.tries):
            trace = root.parent / f"topogen-sigint-trace-{os.getpid()}-{i}.txt"
            cmd = [sys.executable, "-c", TRACER, str(trace)] if args.trace else [sys.executable, "-c", FROM_SOURCE, args.source] if args.source else [sys.executable, "-m", "topogen"]
            at = rng.uniform(args.lo, args.hi)
            start = time.monotonic()
            p = subprocess.Popen([*cmd, "build", *build, "--out", str(out)], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
            time.sleep(max(0.0, at - (time.monotonic() - start)))
            os.killpg(p.pid, signal.SIGINT)
            sent = time.monotonic()
            _, err = p.communicate(timeout=600)
            took = time.monotonic() - sent
            said = [ln for ln in err.splitlines() if not ln.startswith("topogen: [")]
            problems = []
            if p.returncode == 0:
                problems.append("lost (exit 0)")
            elif p.returncode != 130:
                problems.append(f"exit {p.returncode}")
            if p.returncode != 0 and said != [SAID]:
                problems.append("stderr")
            if sorted(q.name for q in root.iterdir()) != ["big"]:
                problems.append("leftovers " + ",".join(sorted(q.name for q in root.iterdir() if q.name != "big")))
            if not intact(out):
                problems.append("output changed" if p.returncode != 0 else "output replaced")
            left = group_left(p.pid)
            if left:
                problems.append("orphans " + "; ".join(left))
                os.killpg(p.pid, signal.SIGKILL)
            for x in problems:
                failures[x.split(" ")[0]] = failures.get(x.split(" ")[0], 0) + 1
            mark = "ok" if not problems else "; ".join(problems)
            slow = p.returncode != 0 and took > args.slow
            if slow:
                mark += f" (slow: exit {took:.1f} s after the signal)"
                slow_tries += 1
            print(f"try {i + 1:3d}: SIGINT at {at:5.2f} s, exit {p.returncode:4d}, {time.monotonic() - start:5.1f} s: {mark}", flush=True)
            if problems and err.strip() and said != [SAID]:
                lines = err.strip().splitlines()
                print("  stderr: " + "\n  stderr: ".join(lines if args.full else lines[-12:]), flush=True)
            if args.trace:
                if (problems or slow) and trace.exists():
                    print("  trace:\n    " + "\n    ".join(trace.read_text().splitlines()), flush=True)
                trace.unlink(missing_ok=True)
    lost = failures.get("lost", 0)
    print(f"{args.tries} tries: {lost} lost interrupts; other failures: {dict((k, v) for k, v in failures.items() if k != 'lost') or 'none'}; {slow_tries} exits slower than {args.slow} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
