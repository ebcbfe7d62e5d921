"""Exporters in forked worker processes (``--jobs``) and hashing while writing.

The parallel path must give the serial path's files byte for byte, the same
notes for the user, and the same errors; the manifest's hashes must be those
of the files as they lie on disk.
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from click.testing import CliRunner

from topogen import pipeline
from topogen.cli import main
from topogen.exports import EXPORTERS, files, workers
from topogen.spec.cluster import build_spec, load_spec
from topogen.util.errors import InputError, Problem


def tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "spec",
    [
        load_spec("demo", {}),
        # mid-size, every format: two planes, nodes smaller than the HB domain, detail diagrams skipped (a note)
        build_spec({"name": "mid", "gpus": 4608, "hb_domain": 72, "radix": 32, "planes": 2, "gpus_per_node": 4}),
    ],
    ids=["demo", "mid"],
)
def test_parallel_exports_equal_serial_byte_for_byte(tmp_path, spec):
    formats = pipeline.resolve_formats("all")
    outs, notes, lists = {}, {}, {}
    for jobs in (1, 3):
        ctx = pipeline.build(spec)
        out = tmp_path / f"j{jobs}"
        lists[jobs] = [p.relative_to(out).as_posix() for p in pipeline.write_outputs(ctx, out, pipeline.export_formats(ctx, formats), jobs=jobs)]
        outs[jobs], notes[jobs] = tree(out), list(ctx.messages)
    assert set(outs[1]) == set(outs[3]) and len(outs[1]) > 20
    for rel in outs[1]:
        assert outs[1][rel] == outs[3][rel], rel
    assert notes[1] == notes[3] and lists[1] == lists[3]
    manifest = json.loads(outs[3]["manifest.json"])
    assert {e["path"] for e in manifest["files"]} == set(outs[3]) - {"manifest.json"}
    for e in manifest["files"]:
        data = outs[3][e["path"]]
        assert e["bytes"] == len(data) and e["sha256"] == hashlib.sha256(data).hexdigest(), e["path"]


def _fails(ctx, dest):
    raise InputError([Problem("catalog.switches[0].price", "not a number", "give a price in USD")])


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_worker_error_is_the_serial_error(tmp_path, monkeypatch, jobs):
    """An exporter's InputError surfaces from a worker as from the serial run: message, exit 2, nothing written."""
    monkeypatch.setitem(EXPORTERS, "graphml", _fails)
    res = CliRunner().invoke(main, ["build", "demo", "--out", str(tmp_path / "o"), "--jobs", jobs])
    assert res.exit_code == 2, res.output
    assert "error: catalog.switches[0].price: not a number; give a price in USD" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "o").exists()


def test_first_failing_exporter_in_registry_order_wins(tmp_path, monkeypatch):
    def later(ctx, dest):
        raise RuntimeError("slurm broke")

    monkeypatch.setitem(EXPORTERS, "topology", _fails)  # runs before slurm in the registry
    monkeypatch.setitem(EXPORTERS, "slurm", later)
    ctx = pipeline.build(load_spec("demo", {}))
    with pytest.raises(InputError) as exc:
        pipeline.write_outputs(ctx, tmp_path / "o", ["topology", "slurm", "cabling"], jobs=2)
    assert exc.value.problems[0].path == "catalog.switches[0].price"


def test_jobs_must_be_positive(tmp_path):
    res = CliRunner().invoke(main, ["build", "demo", "--out", str(tmp_path / "o"), "--jobs", "0"])
    assert res.exit_code == 2 and "--jobs" in res.output


def test_default_jobs_is_the_cpus_capped():
    assert 1 <= workers.default_jobs() <= min(workers.MAX_DEFAULT_JOBS, os.cpu_count() or 1)


def test_digest_of_a_file_written_through_open_output(tmp_path):
    p = tmp_path / "x.txt"
    with files.open_output(p, newline="\n") as fh:
        fh.write("é\n" * 100000)
    assert files.digest(p) == (p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest())


def test_digest_reads_a_file_changed_after_writing(tmp_path):
    """A registration is trusted only while size and mtime match: a rewritten file is hashed again."""
    p = tmp_path / "x.bin"
    with files.open_output(p, "wb") as fh:
        fh.write(b"a" * 10)
    os.utime(p, ns=(0, 0))  # same size, other mtime (as a tool rewriting it would leave)
    p.write_bytes(b"b" * 10)
    os.utime(p, ns=(0, 0))
    assert files.digest(p) == (10, hashlib.sha256(b"b" * 10).hexdigest())
    q = tmp_path / "plain.txt"  # written with plain open(): never registered, read back
    q.write_text("plain\n")
    assert files.digest(q) == (6, hashlib.sha256(b"plain\n").hexdigest())


def test_parallel_manifest_reads_nothing_back_in_the_parent(tmp_path, monkeypatch):
    """With workers, every file is hashed where it was written: the parent never reads an output."""
    parent = os.getpid()
    read = files._read

    def only_in_workers(key, st):
        assert os.getpid() != parent, f"the parent read {key} back"
        return read(key, st)

    monkeypatch.setattr(files, "_read", only_in_workers)
    ctx = pipeline.build(load_spec("demo", {}))
    written = pipeline.write_outputs(ctx, tmp_path / "o", pipeline.export_formats(ctx, pipeline.resolve_formats("all")), jobs=2)
    assert any(p.suffix == ".xlsx" for p in written) and any(p.suffix == ".png" for p in written)  # files not written by open_output
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    for e in manifest["files"]:
        assert e["sha256"] == hashlib.sha256((tmp_path / "o" / e["path"]).read_bytes()).hexdigest()


def test_netbox_parts_are_tasks_written_as_the_serial_run(tmp_path):
    """NetBox's devices, interfaces and cables are separate worker tasks; split files (-001...) as with --jobs 1."""
    spec = build_spec({"name": "mid", "gpus": 4608, "hb_domain": 72, "radix": 32, "planes": 2, "gpus_per_node": 4})
    ctx = pipeline.build(spec)
    tasks = workers.task_list(ctx, ["cabling", "netbox"])
    assert [t for t in tasks if t[0] == "netbox"] == [("netbox", a, p) for a in ctx.fabrics for p in ("devices", "interfaces", "cables")]
    outs = {}
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        pipeline.write_outputs(ctx, out, ["netbox"], jobs=jobs)
        outs[jobs] = tree(out)
    assert outs[1] == outs[2]
    assert any(rel.endswith("interfaces-002.csv") for rel in outs[2]) and any(rel.startswith("netbox/") for rel in outs[2])
