"""How long the progress display stands still: a command run under a terminal (a pty), each redraw timed.

    .venv/bin/python bench/progress_gaps.py -- topogen build --gpus 131072 --hb-domain 8 --radix 64 --out /tmp/big
    .venv/bin/python bench/progress_gaps.py -- topogen simulate --gpus 131072 --hb-domain 8 --radix 64 --hb-bandwidth 7200

Prints the longest gap between two screen updates, overall and per phase (the
text after ``N/M``), and the wall time. The target (docs/running.md): no gap
longer than 2 s once the first line shows.
"""

from __future__ import annotations

import os
import pty
import re
import sys
import time

FRAME_RE = re.compile(r"\] \d+/\d+ (.*?)\s+[0-9.]+ s$")


def main(argv: list[str]) -> int:
    cmd = argv[argv.index("--") + 1 :] if "--" in argv else argv
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    start = time.monotonic()
    last = None
    worst: dict[str, float] = {}
    buf = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        now = time.monotonic()
        buf += chunk
        frames = buf.split(b"\r")
        buf = frames[-1]
        for f in frames[:-1]:
            m = FRAME_RE.search(f.decode(errors="replace").strip())
            if not m:
                continue
            phase = m.group(1).split(":")[0].strip()
            if last is not None:
                worst[phase] = max(worst.get(phase, 0.0), now - last)
            last = now
    _, status = os.waitpid(pid, 0)
    wall = time.monotonic() - start
    print(f"wall {wall:.1f} s, exit {os.waitstatus_to_exitcode(status)}; longest gap between redraws per phase:")
    for phase, gap in sorted(worst.items(), key=lambda kv: -kv[1]):
        print(f"  {gap:6.2f} s  {phase}")
    print(f"longest: {max(worst.values(), default=0.0):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
