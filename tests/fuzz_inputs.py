"""Property-based fuzzing of spec fields, flags and wiring files (hypothesis).

Not collected by itself: ``tests/test_fuzz.py`` runs this file in a child process with
an address-space limit (RLIMIT_AS) and a CPU-time limit, and every example runs under
an alarm, so each hostile case is bounded in memory and time. The properties:

* a spec (YAML file or flags) with at least one hostile field: exit 2, the message
  names a field, no traceback, nothing written;
* any mutation of a valid cabling.csv or topology.json: exit 0, 1 or 2, never a
  traceback (and exit 2 for undecodable or malformed files).
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
from pathlib import Path

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topogen.cli import main

SECONDS_PER_CASE = 10
EXAMPLES = int(os.environ.get("TOPOGEN_FUZZ_EXAMPLES", "60"))
BASE = {"name": "fz", "gpus": 64, "hb_domain": 8, "radix": 16}
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize="TOPOGEN_FUZZ_RANDOM" not in os.environ)


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout(f"a case took more than {SECONDS_PER_CASE} s")


def invoke(args: list[str]):
    """Run the CLI in-process under an alarm; the result (exceptions caught, to be asserted on)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS_PER_CASE)
    try:
        return CliRunner().invoke(main, args, catch_exceptions=True)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def assert_clean(res, codes=(2,)):
    """Exit code in ``codes``, no exception escaped (click's SystemExit is the normal way out)."""
    exc = res.exception
    assert exc is None or isinstance(exc, SystemExit), f"{type(exc).__name__}: {exc}"
    assert res.exit_code in codes, (res.exit_code, res.output[-2000:])
    assert "Traceback" not in res.output


# --- hostile values ------------------------------------------------------------------------

huge_digits = st.integers(min_value=19, max_value=6000).map(lambda n: "9" * n)
non_ascii_digits = st.text(alphabet="０１２３４５６７８９٠١٢٣٤٥६७", min_size=1, max_size=6)
control_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x9F), min_size=1, max_size=20).filter(lambda s: any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in s))
nested = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5), lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=3), kids, max_size=3), max_leaves=30)


def bad_int(limit: int):
    return st.one_of(
        st.integers(max_value=0),
        st.integers(min_value=limit + 1, max_value=10**29),
        huge_digits,
        non_ascii_digits,
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.text(max_size=12).filter(lambda s: not s.strip().isascii() or not s.strip().isdigit()),
        st.lists(st.integers(), max_size=3),
    )


FIELDS = {
    "gpus": bad_int(1 << 24),
    "hb_domain": bad_int(4096),
    "radix": bad_int(4096),
    "link_speed": bad_int(102_400),
    "planes": bad_int(8),
    "gpus_per_node": bad_int(0),  # hb_domain is 8: every value fails (non-divisors included via the ints above)
    "name": st.one_of(control_text, st.text(min_size=101, max_size=300), st.sampled_from([".", "..", "a/b", "-x", "a b", "é"]), nested.filter(lambda v: not isinstance(v, (str, int)))),
    "arch": st.one_of(st.text(max_size=20).filter(lambda s: s not in ("both", "rail-optimized", "rail-only")), nested),
    "catalog": st.one_of(control_text, st.text(max_size=30).filter(lambda s: not s.strip() or "/" not in s and not s.endswith(".yaml")).filter(lambda s: s not in ("paper", "ndr-400g", "xdr-800g")), nested),
    "oversubscription": st.one_of(st.sampled_from(["0:1", "1:2", "1:0", "99999:1", "3:1:1", "a:b", "３:1"]), huge_digits.map(lambda s: s + ":1"), st.floats(), st.booleans()),
}


@SETTINGS
@given(data=st.data())
def test_hostile_spec_file(data):
    keys = data.draw(st.lists(st.sampled_from(sorted(FIELDS)), min_size=1, max_size=3, unique=True))
    spec = dict(BASE)
    for k in keys:
        spec[k] = data.draw(FIELDS[k], label=k)
    if "gpus_per_node" in keys and isinstance(spec["gpus_per_node"], int) and not isinstance(spec["gpus_per_node"], bool) and 0 < spec["gpus_per_node"] and 8 % spec["gpus_per_node"] == 0:
        spec["gpus_per_node"] = 3
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "s.yaml"
        p.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
        res = invoke(["build", str(p), "--out", str(Path(d) / "o")])
        assert_clean(res)
        assert any(f"{k}:" in res.stderr or "YAML" in res.stderr for k in keys), res.stderr
        assert not (Path(d) / "o").exists() and sorted(x.name for x in Path(d).iterdir()) == ["s.yaml"]


FLAGS = {"gpus": "--gpus", "hb_domain": "--hb-domain", "radix": "--radix", "link_speed": "--link-speed", "planes": "--planes", "oversubscription": "--oversubscription", "arch": "--arch", "name": "--name"}


@SETTINGS
@given(data=st.data())
def test_hostile_flags(data):
    key = data.draw(st.sampled_from(sorted(FLAGS)))
    value = data.draw(FIELDS[key].filter(lambda v: isinstance(v, str) and "\x00" not in v), label=key)
    args = {"--gpus": "64", "--hb-domain": "8", "--radix": "16", "--name": "fz"}
    args[FLAGS[key]] = value
    with tempfile.TemporaryDirectory() as d:
        res = invoke(["build", *[x for kv in args.items() for x in kv], "--out", str(Path(d) / "o")])
        assert_clean(res)
        assert list(Path(d).iterdir()) == []


@SETTINGS
@given(text=st.text(max_size=300))
def test_arbitrary_yaml_text(text):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "s.yaml"
        p.write_text("name: fz\ngpus: 64\nhb_domain: 8\nradix: 16\n" + text, encoding="utf-8")
        res = invoke(["build", str(p), "--formats", "cabling", "--out", str(Path(d) / "o")])
        assert_clean(res, codes=(0, 2))
        if res.exit_code == 2:
            assert not (Path(d) / "o").exists()


# --- wiring files ---------------------------------------------------------------------------

_BUILT: dict[str, bytes] = {}


def built(name: str) -> bytes:
    if not _BUILT:
        with tempfile.TemporaryDirectory() as d:
            res = CliRunner().invoke(main, ["build", "demo", "--arch", "rail-only", "--formats", "cabling,topology", "--out", f"{d}/o"])
            assert res.exit_code == 0, res.output
            for n in ("cabling.csv", "topology.json"):
                _BUILT[n] = Path(f"{d}/o/rail-only/{n}").read_bytes()
    return _BUILT[name]


junk = st.one_of(st.binary(max_size=40), huge_digits.map(str.encode), st.sampled_from([b"\r", b"\n", b"\xef\xbb\xbf", b";", b'"', b",", b"\x00", b"p\xef\xbc\x91", b"#", b"\r\n"]))


@SETTINGS
@given(data=st.data())
def test_mutated_cabling_csv(data):
    blob = bytearray(built("cabling.csv"))
    for _ in range(data.draw(st.integers(1, 5))):
        at = data.draw(st.integers(0, len(blob)))
        cut = data.draw(st.integers(0, 20))
        blob[at : at + cut] = data.draw(junk)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c.csv"
        p.write_bytes(bytes(blob))
        res = invoke(["validate", str(p), "--spec", "demo", "--arch", "rail-only"])
        assert_clean(res, codes=(0, 1, 2))
        assert sorted(x.name for x in Path(d).iterdir()) == ["c.csv"]


json_values = st.one_of(nested, st.integers(min_value=-(10**40), max_value=10**40), st.floats(), huge_digits)


@SETTINGS
@given(data=st.data())
def test_mutated_topology_json(data):
    doc = json.loads(built("topology.json"))
    for _ in range(data.draw(st.integers(1, 4))):
        where = data.draw(st.sampled_from(["spec", "edge", "node", "graph"]))
        value = data.draw(json_values)
        graph = doc.get("graph") if isinstance(doc.get("graph"), dict) else None
        spec = graph.get("spec") if graph is not None and isinstance(graph.get("spec"), dict) else None
        if where == "spec" and spec:
            spec[data.draw(st.sampled_from(sorted(spec)))] = value
        elif where == "edge":
            e = doc["edges"][data.draw(st.integers(0, len(doc["edges"]) - 1))]
            if isinstance(e, dict):
                e[data.draw(st.sampled_from(sorted(e)))] = value
            else:
                doc["edges"].append(value)
        elif where == "node":
            doc["nodes"][data.draw(st.integers(0, len(doc["nodes"]) - 1))] = value
        elif graph:
            graph[data.draw(st.sampled_from(sorted(graph)))] = value
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.json"
        p.write_text(json.dumps(doc) if data.draw(st.booleans()) else json.dumps(doc)[: data.draw(st.integers(0, 200))])
        res = invoke(["validate", str(p)])
        assert_clean(res, codes=(0, 1, 2))
        assert sorted(x.name for x in Path(d).iterdir()) == ["t.json"]
