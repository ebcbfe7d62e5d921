"""Progress mechanics without timing: a fake clock, counted writes and callbacks, the heartbeat thread stopped and resumed."""

from __future__ import annotations

import io
import re
import threading

from click.testing import CliRunner

from topogen import pipeline
from topogen.cli import main
from topogen.exports import workers
from topogen.spec.cluster import load_spec
from topogen.util import progress
from topogen.util.progress import Progress


class Tty(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_heartbeat_redraws_the_bar_with_the_elapsed_time():
    """A long phase that says nothing: each heartbeat redraws the bar with the time gone by."""
    out, clock = Tty(), Clock()
    p = Progress(4, out, delay=0, clock=clock, beat=0)
    p("writing cabling")
    clock.t += 7.5
    p.tick()
    clock.t += 2.0
    p.tick()
    frames = out.getvalue().split("\r")[1:]
    assert [re.search(r"(\d+\.\d) s$", f).group(1) for f in frames] == ["0.0", "7.5", "9.5"]
    assert all("1/4 writing cabling" in f for f in frames)
    p.done()


def test_steps_within_a_phase():
    """progress.detail: redrawn after the phase on a terminal, a line of its own elsewhere."""
    tty, clock = Tty(), Clock()
    p = Progress(3, tty, delay=0, clock=clock, beat=0)
    p("writing")
    clock.t += 3
    p.detail("2/5: topology done")
    assert tty.getvalue().split("\r")[-1].startswith("[########----------------] 1/3 writing: 2/5: topology done")
    log = io.StringIO()
    q = Progress(3, log, delay=0, clock=clock, beat=0)
    q("writing")
    clock.t += 3
    q.detail("2/5: topology done")
    q.tick()  # off a terminal a heartbeat writes nothing: lines come per phase and step
    assert log.getvalue().splitlines() == ["topogen: [   0.0 s] writing", "topogen: [   3.0 s] writing: 2/5: topology done"]


def test_no_line_before_the_delay():
    log, clock = io.StringIO(), Clock()
    p = Progress(3, log, clock=clock, beat=0)
    p("wiring")
    p.detail("half")
    clock.t += progress.DELAY
    p("validation")
    assert log.getvalue() == f"topogen: [{progress.DELAY:6.1f} s] validation\n"


def test_heartbeat_thread_runs_pauses_and_stops():
    """On a terminal a thread redraws the bar by itself; paused() (a fork) stops it; done() stops it for good."""
    seen = threading.Event()

    class Counting(Tty):
        writes = 0

        def write(self, text):
            type(self).writes += 1
            if type(self).writes >= 4:
                seen.set()
            return super().write(text)

    out = Counting()
    p = Progress(2, out, delay=0, beat=0.01)
    p("wiring")
    assert seen.wait(60), "the heartbeat never redrew the bar"
    with p.paused():
        assert p._thread is None
    assert p._thread is not None and p._thread.is_alive()
    p.done()
    assert p._thread is None
    after = Counting.writes
    assert out.getvalue().endswith("\r") and Counting.writes == after


def test_off_a_terminal_a_phase_begun_within_the_delay_gets_its_line_once():
    """Off a terminal the heartbeat writes the line of a phase still running when the delay passes (it began silent), once; a phase already said is not repeated."""
    log, clock = io.StringIO(), Clock()
    p = Progress(3, log, clock=clock, beat=0)
    p("fabric")
    p("ring-allreduce, spray, rail-optimized")
    p.tick()  # still within the delay: nothing
    assert log.getvalue() == ""
    clock.t += progress.DELAY + 0.5
    p.tick()
    p.tick()
    clock.t += 10
    p("ring-allreduce, spray, rail-only")
    p.tick()
    assert log.getvalue().splitlines() == [
        f"topogen: [{progress.DELAY + 0.5:6.1f} s] ring-allreduce, spray, rail-optimized",
        f"topogen: [{progress.DELAY + 10.5:6.1f} s] ring-allreduce, spray, rail-only",
    ]


def test_off_a_terminal_the_thread_runs_and_stops():
    seen = threading.Event()

    class Log(io.StringIO):
        def write(self, text):
            seen.set()
            return super().write(text)

    out = Log()
    p = Progress(2, out, delay=0.05, beat=0.01)
    p("fabric")  # within the delay: said by the heartbeat
    assert p._thread is not None
    assert seen.wait(60), "the heartbeat never wrote the phase"
    p.done()
    assert p._thread is None and out.getvalue().count("fabric") == 1
    assert Progress(2, io.StringIO(), enabled=False)._thread is None


def test_exporters_report_each_task_done(tmp_path):
    """workers.run calls done() once per task, serially and from the pool, ending at n/n."""
    ctx = pipeline.build(load_spec("demo", {}))
    formats = ["cabling", "slurm", "topology"]
    for jobs in (1, 2):
        heard: list[str] = []
        pauses: list[int] = []

        class Pause:
            def __enter__(self):
                pauses.append(1)

            def __exit__(self, *exc):
                return False

        dest = tmp_path / f"j{jobs}"
        dest.mkdir()
        workers.run(ctx, dest, formats, jobs, heard.append, Pause)
        n = len(formats) if jobs == 1 else len(workers.task_list(ctx, formats))
        assert len(heard) == n and heard[-1].startswith(f"{n}/{n}: ")
        assert [int(h.split("/")[0]) for h in heard] == list(range(1, n + 1))
        assert pauses == ([] if jobs == 1 else [1])


def test_build_lines_per_exporter_off_a_terminal(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0)
    res = CliRunner().invoke(main, ["build", "demo", "--out", str(tmp_path / "o"), "--formats", "cabling,slurm", "--jobs", "2"])
    assert res.exit_code == 0, res.output
    lines = [ln.split("] ", 1)[1] for ln in res.stderr.splitlines() if ln.startswith("topogen: [")]
    steps = [ln for ln in lines if ln.startswith("writing") and ": " in ln and " done" in ln]
    assert steps and steps[-1].split(": ")[1].split(" ")[0] == f"{len(steps)}/{len(steps)}"
    assert lines[-1] == "manifest"


def test_simulate_reports_its_runs(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0)
    res = CliRunner().invoke(main, ["simulate", "demo", "--pattern", "ring-allreduce,alltoall", "--routing", "spray", "--hb-bandwidth", "7200", "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    lines = [ln.split("] ", 1)[1] for ln in res.stderr.splitlines() if ln.startswith("topogen: [")]
    assert lines[0] == "fabric"
    assert sorted(lines[1:]) == sorted(f"{p}, spray, {a}" for p in ("ring-allreduce", "alltoall") for a in ("rail-only", "rail-optimized"))
    assert "topogen: [" not in res.stdout
