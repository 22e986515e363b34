"""ContinualDomains-v0 fidelity: the HSIC term of ``lear`` with the official code's fixed width σ = 1 is a constant on
the gym's features (a kernel matrix equal to the identity) while the median-heuristic width (the default) measures
dependence; Mahalanobis routing sends the rows of a domain that lies inside a broader one to the broader domain's
expert, the log-likelihood rule does not; nothing private is reachable from the problem; the evaluator scores only its
own records (a declared parameter count is ignored, the experts used are counted); headline on fresh seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym_tests import find_private, require  # the helpers of tests/conftest.py

torch = require("torch", "torch")

from papergym.agents.solvers.lear import (
    DEFAULTS,
    LEAR,
    expert_score,
    hsic,
    ledoit_wolf_gaussian,
)
from papergym.baselines.solvers.continual import FineTune
from papergym.envs.tasks.base import Budget, make_task
from papergym.envs.tasks.continual_domains import backbone_features, load_backbone
from papergym.envs.tasks.sealed import SealedCall

TASK = "ContinualDomains-v0"
TINY = {"domains": ["original", "invert", "rot90"], "images_per_domain": 40, "epochs": 1, "test_batch_size": 5}


def _quiet(*a, **k):
    return None


def test_hsic_with_unit_width_is_a_constant_on_the_gym_features_and_the_median_width_is_not():
    """On 32 rows of the stand-in backbone's 128-d features the median pairwise squared distance is in the hundreds,
    so exp(−d/1) is the identity matrix: HSIC = tr(H H)/(m − 1)² = 1/(m − 1) whether the second view is the
    dependent one or a row permutation of it. With the median width the dependent pair scores higher."""
    task = make_task(TASK, seeds=[2001])
    pb, ev = task.make(task.instances()[0])
    X = ev.stream.domains[0].X_train[:32]
    bb = load_backbone()
    g = torch.tensor(backbone_features(bb, X))
    h1 = backbone_features(bb, X, layer=1)
    loc = torch.tensor(np.maximum(h1 @ (0.9 * bb.W2).T + bb.b2, 0.0))  # a second, dependent view
    perm = torch.as_tensor(np.random.default_rng(0).permutation(32))
    m = 32
    dep1, ind1 = float(hsic(g, loc)), float(hsic(g, loc[perm]))
    assert dep1 == pytest.approx(1 / (m - 1), rel=1e-3) and ind1 == pytest.approx(1 / (m - 1), rel=1e-3)
    assert dep1 == pytest.approx(ind1, rel=1e-3)  # blind to the dependence
    dep, ind = float(hsic(g, loc, "median", "median")), float(hsic(g, loc[perm], "median", "median"))
    assert dep > 2 * ind > 0 and dep - ind > 100 * abs(dep1 - ind1)
    assert DEFAULTS["hsic_sigma"] == "median" and LEAR().hsic_sigma == "median"


def test_the_hsic_term_has_a_gradient_only_with_the_median_width():
    task = make_task(TASK, seeds=[2002], **TINY)
    norms = {}
    for sigma in (1.0, "median"):
        pb, ev = task.make(task.instances()[0])
        sol = LEAR(seed=0, hsic_sigma=sigma, use_kl=False, use_mse=False).solve(pb, Budget(max_seconds=60), _quiet)
        norms[sigma] = max(sol["meta"]["hsic_grad_norm"])
    assert norms[1.0] < 1e-3 < norms["median"]


def test_mahalanobis_routes_a_contracted_domain_to_the_broad_one_and_loglik_does_not():
    """Domain B is domain A shrunk by 0.3 about A's mean (like a blur of A's images): B's rows lie inside A's Gaussian,
    closer in A's metric than in their own — the distance rule picks A; adding the log-determinant picks B."""
    rng = np.random.default_rng(2003)
    p = 16
    A = rng.standard_normal((400, p)) * rng.uniform(0.5, 2.0, p)
    B = 0.3 * rng.standard_normal((400, p)) * rng.uniform(0.5, 2.0, p)
    experts = [ledoit_wolf_gaussian(A[:300]), ledoit_wolf_gaussian(B[:300])]
    for rule, want in (("mahalanobis", 0), ("loglik", 1)):
        scores = np.stack([expert_score(B[300:], mu, P, rule) for mu, P in experts])
        assert int(scores.mean(axis=1).argmin()) == want, rule
        assert int(np.stack([expert_score(A[300:], mu, P, rule) for mu, P in experts]).mean(axis=1).argmin()) == 0
    with pytest.raises(ValueError, match="selection_score"):
        expert_score(A, *experts[0], rule="nearest")
    with pytest.raises(ValueError, match="selection_score"):
        LEAR(selection_score="nearest")


def test_no_private_state_is_reachable_from_the_problem():
    task = make_task(TASK, seeds=[2004, 2005], **TINY)
    for ref in task.instances():
        pb, ev = task.make(ref)
        s = ev.stream
        private = [s, ev, *s.domains, *s.records.values()]
        for d in s.domains:
            private += [d.X_test, d.y_test, d.X_train, d.y_train]
        assert find_private(pb, private) == []
        assert all(
            isinstance(getattr(pb.stream, k), SealedCall) for k in ("next_domain", "test_batches", "answer", "status")
        )
        sol = LEAR(seed=0).solve(pb, Budget(max_seconds=60), _quiet)  # the sealed calls drive a whole stream
        assert find_private(pb, private) == []
        m = ev.evaluate(sol)
        assert 0.0 <= m["final_acc"] <= 1.0 and m["experts_used"] <= pb.n_domains


def test_the_evaluator_ignores_a_declared_parameter_count_and_counts_the_experts_used():
    task = make_task(TASK, seeds=[2006], **TINY)
    pb, ev = task.make(task.instances()[0])
    st = pb.stream
    while st.next_domain() is not None:
        b = st.test_batches()
        st.answer([np.zeros(len(x), dtype=np.int64) for x in b], [0] * len(b))
    b = st.test_batches()
    st.answer([np.zeros(len(x), dtype=np.int64) for x in b], [[k % 2] for k in range(len(b))])
    honest = ev.evaluate({"params_added": [10_000, 10_000, 10_000]})
    liar = ev.evaluate({"params_added": [0, 0, 0], "meta": {"param_growth": 0}})
    assert honest == pytest.approx(liar, nan_ok=True)
    assert "param_growth" not in honest and honest["experts_used"] == 1.0  # last batch pass: expert 0


def test_headline_on_fresh_seeds_lear_beats_sequential_finetuning():
    """LEAR's per-domain experts keep old domains where sequential fine-tuning of one shared head overwrites them
    (digits/T=6, seed 2010: a seed no other test uses)."""
    task = make_task(TASK, seeds=[2010])
    ref = task.instances()[0]
    out = {}
    for name, solver in (("lear", LEAR(seed=0)), ("finetune", FineTune(seed=0))):
        pb, ev = task.make(ref)
        out[name] = ev.evaluate(solver.solve(pb, Budget(max_seconds=60), _quiet))
    assert out["lear"]["final_acc"] > out["finetune"]["final_acc"] + 0.1
    assert out["lear"]["forgetting"] < out["finetune"]["forgetting"]
    assert out["lear"]["selection_acc"] >= 0.5 and math.isnan(out["finetune"]["selection_acc"])
