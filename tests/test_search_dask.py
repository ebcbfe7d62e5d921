"""topogen search on a real Dask cluster: a `dask scheduler` and two `dask worker` processes on 127.0.0.1.

The test starts them on free ports and always stops them (by their own process
ids). It proves that the distributed run gives the local run's front and choice,
and that a search completes when one worker is killed in the middle of it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from topogen.search import run, space
from topogen.search.executor import Dask, Local

DASK = str(Path(sys.executable).parent / "dask")
SEARCH = {
    "name": "dask-small",
    "workload": {"model": "gpt-3-175b", "gpu": "b200"},
    "search": {
        "gpus": 4096,
        "space": {"arch": ["rail-optimized", "rail-only"], "hb_domain": [8, 64], "catalog": ["ndr-400g", "xdr-800g"], "oversubscription": ["1:1", "3:1"]},
        "objectives": ["capex", "power", "iteration", "blast_radius"],
    },
}
SLOW = {  # 16 designs of 131,072 GPUs, every one built explicitly (slack 1): long enough to kill a worker mid-run
    "name": "dask-kill",
    "workload": {"model": "gpt-3-175b", "gpu": "b200"},
    "search": {
        "gpus": 131072,
        "space": {"arch": ["rail-optimized", "rail-only"], "hb_domain": [8, 16, 32, 64], "catalog": ["ndr-400g"], "radix": [64], "link_speed": [400], "oversubscription": ["1:1", "3:1"]},
        "objectives": ["capex", "power", "iteration", "blast_radius"],
        "slack": 1.0,
    },
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen) -> None:
    """Stop one process this test started (its own session: the worker's children go with it)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from distributed import Client

    logs = tmp_path_factory.mktemp("dask")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []

    def start(args: list[str], log: str) -> subprocess.Popen:
        p = subprocess.Popen([DASK, *args], stdout=open(logs / log, "w"), stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(p)
        return p

    try:
        start(["scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", f"127.0.0.1:{free_port()}"], "scheduler.log")
        workers = [start(["worker", address, "--no-nanny", "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"], f"worker{i}.log") for i in (1, 2)]
        deadline = time.monotonic() + 120
        client = None
        while client is None:
            try:
                client = Client(address, timeout=10, set_as_default=False)
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        try:
            while len(client.scheduler_info()["workers"]) < 2:
                assert time.monotonic() < deadline, (logs / "worker1.log").read_text()[-2000:]
                time.sleep(0.5)
        finally:
            client.close()
        yield address, workers, logs
    finally:
        for p in reversed(procs):
            stop(p)


def local_and_dask(data: dict, address: str):
    s = space.parse(data, {})
    return run.search(s, Local(1)).as_json(), run.search(s, Dask(address)).as_json()


def test_dask_gives_the_local_front_and_choice(cluster):
    address, _workers, _logs = cluster
    here, there = local_and_dask(SEARCH, address)
    assert there["stats"]["built"] > 1 and there["stats"]["executor"] == f"the Dask cluster at {address}"
    assert there["front"] == here["front"] and there["chosen"] == here["chosen"] and there["rows"] == here["rows"]
    assert there["families"] == here["families"]


def test_a_worker_killed_mid_run_still_completes(cluster, tmp_path):
    address, workers, logs = cluster
    spec = tmp_path / "slow.yaml"
    spec.write_text(yaml.safe_dump(SLOW, sort_keys=False))
    journal = tmp_path / "results.jsonl"
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "topogen", "search", str(spec), "--scheduler", address, "--results", str(journal), "--out", str(out), "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not journal.exists() or len(journal.read_text().splitlines()) < 2:  # header + one finished build
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        done_at_kill = len(journal.read_text().splitlines()) - 1
        os.killpg(workers[0].pid, signal.SIGKILL)
        workers[0].wait(10)
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        stop(proc)
    assert proc.returncode == 0, stderr
    got = json.loads(stdout)
    assert done_at_kill < got["stats"]["built"] == 16, (done_at_kill, got["stats"])
    assert len(journal.read_text().splitlines()) == 1 + 16
    here = run.search(space.parse(SLOW, {}), Local(1)).as_json()
    assert got["front"] == here["front"] and got["chosen"] == here["chosen"]
