"""Max-min fair rates (:func:`topogen.traffic.rates.max_min`) against progressive filling done one level at a time.

The reference below raises every growing flow together to the next link that fills, freezes
the flows on every link that filled, and repeats: the textbook definition, one round per
distinct rate level. ``max_min`` fills every locally lowest link in the same round; over random
incidences (shares below 1, dead flows, flows of several groups as spraying factors them, and
the ecmp runs of ``simulate`` with several queue pairs per pair) both must give the same rates.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from topogen.fabric import clos
from topogen.spec.cluster import build_spec
from topogen.traffic import patterns, rates, simulate


def reference(direct, capacity, weight, factors=(), alive=None):
    """Progressive filling, one rate level per round (no cut-down, no shortcuts)."""
    flows, links = direct.shape
    full = direct.toarray()
    for g, m in factors:
        full = full + m.toarray()[g]
    rate = np.zeros(flows)
    active = np.ones(flows, bool) if alive is None else alive.copy()
    active &= (full > 0).any(axis=1)
    residual = capacity.astype(float).copy()
    while active.any():
        load = full[active].T @ weight[active]
        used = load > 0
        step = np.min(residual[used] / load[used])
        rate[active] += step * weight[active]
        residual -= step * load
        filled = used & (residual <= 1e-9 * np.maximum(capacity, 1.0))
        residual[filled] = 0.0
        active &= ~(full[:, filled] > 0).any(axis=1)
    return rate


def random_case(rng, flows, links, density, shares):
    m = sp.random(flows, links, density=density, random_state=rng, format="csr")
    m.data = rng.choice([1.0, 0.5, 0.25], size=m.nnz) if shares else np.ones(m.nnz)
    first = sp.csr_matrix((np.ones(flows), (np.arange(flows), rng.integers(0, links, flows))), shape=(flows, links))
    direct = (m + first).tocsr()  # every flow crosses at least one link (its NIC)
    direct.data = np.minimum(direct.data, 1.0)
    capacity = rng.choice([100.0, 200.0, 400.0, 800.0], size=links)
    weight = rng.choice([1.0, 0.5, 2.0, 1 / 3], size=flows)
    return direct, capacity, weight


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("flows,links,density,shares", [(40, 12, 0.2, False), (200, 60, 0.05, True), (500, 40, 0.1, False), (300, 300, 0.02, True)])
def test_equals_level_by_level_filling(seed, flows, links, density, shares):
    rng = np.random.default_rng(seed)
    direct, capacity, weight = random_case(rng, flows, links, density, shares)
    alive = rng.random(flows) > 0.1
    got = rates.max_min(direct, capacity, weight, alive=alive)
    want = reference(direct, capacity, weight, alive=alive)
    assert np.allclose(got, want, rtol=1e-9, atol=1e-9)
    assert (got[~alive] == 0).all()
    load = direct.T @ got
    assert (load <= capacity * (1 + 1e-9)).all()  # feasible
    # max-min: every flow crosses a full link on which no flow has a larger rate over its weight
    dense = direct.toarray() > 0
    for i in np.flatnonzero(alive):
        tight = dense[i] & (load >= capacity * (1 - 1e-9))
        assert tight.any()
        assert any((got[dense[:, j] & alive] / weight[dense[:, j] & alive] <= got[i] / weight[i] * (1 + 1e-9)).all() for j in np.flatnonzero(tight))


@pytest.mark.parametrize("seed", range(8))
def test_factors_equal_their_expanded_incidence(seed):
    """Flows of a group put the group's row on the links, as spraying factors them."""
    rng = np.random.default_rng(100 + seed)
    direct, capacity, weight = random_case(rng, 150, 50, 0.03, True)
    groups = sp.random(9, 50, density=0.15, random_state=rng, format="csr")
    groups.data = rng.choice([0.5, 0.25, 0.125], size=groups.nnz)
    g, m = rates.factor(rng.integers(-1, 9, 150), groups)
    got = rates.max_min(direct, capacity, weight, [(g, m)])
    want = reference(direct, capacity, weight, [(g, m)])
    assert np.allclose(got, want, rtol=1e-9, atol=1e-9)
    assert np.allclose(rates.max_min(direct + sp.csr_matrix(m.toarray()[g]), capacity, weight), want, rtol=1e-9, atol=1e-9)


def test_stored_zeros_are_not_crossings():
    """A zero share stored in the incidence does not tie a flow to that link's level."""
    direct = sp.csr_matrix((np.array([1.0, 0.0, 1.0]), (np.array([0, 0, 1]), np.array([0, 1, 1]))), shape=(2, 2))
    got = rates.max_min(direct, np.array([10.0, 4.0]), np.ones(2))
    assert np.allclose(got, [10.0, 4.0])


@pytest.mark.parametrize("gpus,hb,radix", [(256, 8, 16), (128, 4, 8)])
@pytest.mark.parametrize("routing,fpp", [("ecmp", 4), ("ecmp", 2), ("dmodk", 1), ("spray", 1)])
def test_simulate_rates_equal_level_by_level_filling(gpus, hb, radix, routing, fpp, monkeypatch):
    """Whole ``simulate`` runs (ecmp with several queue pairs is where rate levels multiply) agree with the reference."""
    spec = build_spec({"name": "r", "gpus": gpus, "hb_domain": hb, "radix": radix, "arch": "rail-optimized"})
    fabric = clos.generate(spec, "rail-optimized")
    got = simulate.run(fabric, patterns.parse("permutation"), routing, 7200.0, flows_per_pair=fpp, key=3)
    monkeypatch.setattr(rates, "max_min", reference)
    want = simulate.run(fabric, patterns.parse("permutation"), routing, 7200.0, flows_per_pair=fpp, key=3)
    assert np.allclose(got.pair_rate, want.pair_rate, rtol=1e-9, atol=1e-9)
    assert got.flows == want.flows and got.unroutable == want.unroutable
    assert np.allclose(got.link_utilisation, want.link_utilisation, rtol=1e-9, atol=1e-9)
