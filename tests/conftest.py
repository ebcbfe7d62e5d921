"""How the suite runs side by side under pytest-xdist (``make test`` is ``pytest -n auto --maxprocesses 4 --dist loadgroup``).

Independent tests are handed to whichever worker is free. A test that uses a fixture scoped to
its module, class or package (a build shared by the file's tests) is grouped with the other tests
of its file, so the build is made once, by one worker, as in a serial run. Files whose tests
must not overlap with each other's (``SERIAL_GROUPS``: real FRR daemons in network namespaces)
share one group and so one worker. Everything a test writes is under its own ``tmp_path`` (each
worker has its own base temp directory), namespaces and sockets carry the process id, and
daemons listen on ports the kernel picks, so workers never collide.
"""

from __future__ import annotations

import pytest

# files whose tests run one after the other on one worker, whatever their fixtures
SERIAL_GROUPS = {
    "test_emulate.py": "emulate",  # FRR daemons in namespaces, a few hundred processes per run
    "test_emulate_leaf_pair.py": "emulate",
}
SHARED_SCOPES = {"module", "class", "package"}


def group_of(item: pytest.Item) -> str | None:
    """The xdist group of ``item``: its file's when it shares a fixture wider than a test, else none."""
    name = item.path.name
    if name in SERIAL_GROUPS:
        return SERIAL_GROUPS[name]
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for defs in info.name2fixturedefs.values():
        if any(d.scope in SHARED_SCOPES for d in defs):
            return name
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return  # pytest-xdist not loaded (-p no:xdist): nothing to group
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        group = group_of(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
