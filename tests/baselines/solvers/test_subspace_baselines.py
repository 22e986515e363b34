"""SubspaceDisentangle-v0 baselines: PCA finds the (larger-variance) style subspace, LDA-then-PCA and FastICA with
labels or view pseudo-labels recover the content subspace, the oracle scores one; every registered solver runs on
every family and supervision."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.agents.base import list_solvers, make_solver
from papergym.baselines.solvers.subspace import linear_transfer, style_pseudo_labels
from papergym.envs.tasks.base import Budget, make_task

TASK = "SubspaceDisentangle-v0"
TINY_DIFFUSION = {"steps": 3, "ddim_steps": 2, "report_every": 0, "batch_size": 32}


def _make(**kw):
    args = {"supervision": "labels", "n": 1000, "seeds": [0]}
    args.update(kw)
    task = make_task(TASK, **args)
    return task.make(task.instances()[0])


def _solve(name, pb, **hp):
    return make_solver(name, TASK, seed=0, **hp).solve(pb, Budget(max_seconds=60), lambda *a, **k: None)


def test_registered_solvers():
    roles = {s.name: s.role for s in list_solvers(TASK)}
    assert roles == {
        "diffusion-disentangle": "paper",
        "pca": "baseline",
        "lda-pca": "baseline",
        "fastica": "baseline",
        "cond-diffusion": "baseline",
        "dual-encoder-noguide": "baseline",
        "oracle-subspace": "reference",
    }


def test_importing_the_baselines_does_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys, papergym.baselines.solvers, papergym.agents.solvers, papergym.envs.tasks.subspace_disentangle;"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("sup", ["labels", "views"])
def test_pca_fails_and_lda_pca_and_fastica_recover_the_content(sup):
    pb, ev = _make(supervision=sup)
    pca, lda, ica = (ev.evaluate(_solve(n, pb)) for n in ("pca", "lda-pca", "fastica"))
    assert pca["subspace_error"] > 0.95 and pca["style_acc"] == 0.0
    assert lda["subspace_error"] < 0.05 and lda["content_acc"] > 0.98 and lda["style_acc"] > 0.98
    assert ica["subspace_error"] < 0.1


def test_view_pseudo_labels_match_the_styles_up_to_a_permutation():
    pb, ev = _make(supervision="views")
    pl = style_pseudo_labels(pb, seed=0)
    true = ev.truth.nearest_style(pb.X_train)
    agree = max(np.mean(pl == perm[true]) for perm in map(np.array, __import__("itertools").permutations(range(3))))
    assert agree > 0.98


def test_linear_transfer_with_the_true_subspace():
    pb, ev = _make()
    m = ev.evaluate({"U_hat": ev.truth.U, "transfer": linear_transfer(pb, ev.truth.U)})
    assert m["disentangle_score"] > 0.99


@pytest.mark.parametrize("sup", ["labels", "views"])
def test_oracle_scores_one_and_needs_the_truth(sup):
    pb, ev = _make(supervision=sup, angle=30.0)
    m = ev.evaluate(_solve("oracle-subspace", ev.reference_problem(), ddim_steps=50))
    assert m["subspace_error"] < 1e-12 and m["content_acc"] > 0.98 and m["style_acc"] > 0.98
    with pytest.raises(ValueError, match="oracle"):
        _solve("oracle-subspace", pb)  # the public problem carries no truth


def test_baselines_are_seeded():
    pb, _ = _make(supervision="views")
    for name in ("lda-pca", "fastica"):
        a, b = _solve(name, pb), _solve(name, pb)
        np.testing.assert_array_equal(a["U_hat"], b["U_hat"])
        np.testing.assert_array_equal(a["transfer"], b["transfer"])


@pytest.fixture(scope="module")
def instances():
    out = {}
    for fam, sup in [("ls-gmm", "labels"), ("ls-gmm", "views"), ("digits", "labels"), ("digits", "views")]:
        task = make_task(TASK, family=fam, supervision=sup, n=200, seeds=[0])
        out[(fam, sup)] = task.make(task.instances()[0])
    return out


@pytest.mark.parametrize(
    "name",
    ["diffusion-disentangle", "pca", "lda-pca", "fastica", "cond-diffusion", "dual-encoder-noguide", "oracle-subspace"],
)
def test_every_solver_runs_on_every_family_and_supervision(name, instances):
    info = {s.name: s for s in list_solvers(TASK)}[name]
    hp = TINY_DIFFUSION if "torch" in info.requires else ({"max_iter": 100} if name == "fastica" else {})
    for (fam, sup), (pb, ev) in instances.items():
        seen = []
        given = ev.reference_problem() if name == "oracle-subspace" else pb
        sol = make_solver(name, TASK, seed=0, **hp).solve(given, Budget(max_seconds=60), lambda s, **k: seen.append(s))
        m = ev.evaluate(sol)
        assert seen and 0.0 <= m["disentangle_score"] <= 1.0, (fam, sup)
        if name == "oracle-subspace":
            assert m["disentangle_score"] > (0.9 if fam == "digits" else 0.99), (fam, sup)
            if fam == "digits":
                assert m["recolor_mse"] < 1e-20 and m["tint_acc"] == 1.0
