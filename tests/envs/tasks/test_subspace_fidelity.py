"""SubspaceDisentangle-v0 fidelity: the generator's truth is not reachable from the public problem (only the
reference view carries it, and ``papergym bench`` gives that view to reference-role solvers only), and the
diffusion estimate of the content subspace is the tail (Polyak–Ruppert) average of the training frames, which
removes the constant-step optimiser noise floor."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.agents.base import make_solver
from papergym.envs.tasks.base import Budget, make_task
from papergym.envs.tasks.subspace_disentangle import subspace_error
from papergym_tests import find_private, require

TASK = "SubspaceDisentangle-v0"


def _make(seed=0, **kw):
    args = {"supervision": "labels", "n": 300, "seeds": [seed]}
    args.update(kw)
    task = make_task(TASK, **args)
    return task.make(task.instances()[0])


@pytest.mark.parametrize("sup", ["labels", "views"])
@pytest.mark.parametrize("angle", [0.0, 30.0])
def test_problem_holds_nothing_private(sup, angle):
    for seed in (0, 1):
        pb, ev = _make(seed, supervision=sup, angle=angle)
        truth = ev.truth
        private = [truth, truth.U, truth.V, truth.mixing, truth.content_means, truth.style_means, ev.source_content]
        if sup == "views":  # under labels the target style index is the public query_style
            private.append(ev.target_style)
        assert pb.oracle is None
        assert find_private(pb, private) == []
        assert find_private(ev.reference_problem(), [truth]) != []  # the walker does see the reference view's truth


def test_digits_problem_holds_nothing_private():
    task = make_task(TASK, family="digits", supervision="views", seeds=[0])
    pb, ev = task.make(task.instances()[0])
    assert find_private(pb, [ev.truth, ev.truth.tints, ev.true_transfer, ev.source_content, ev.target_style]) == []


def test_bench_gives_the_truth_to_reference_solvers_only(tmp_path):
    from papergym.leaderboard import bench

    res = bench(
        TASK,
        solvers=["pca", "oracle-subspace"],
        task_kwargs={"n": 200, "seeds": [0], "supervision": "labels"},
        backend="serial",
        out=tmp_path / "cells",
        hyperparameters={"oracle-subspace": {"ddim_steps": 20}},
    )
    runs = res.runs.set_index("solver")
    assert (res.runs.status == "ok").all()
    assert runs.loc["oracle-subspace", "subspace_error"] < 1e-12
    # a non-reference solver that reads problem.oracle finds nothing there
    with pytest.raises(ValueError, match="oracle"):
        pb, _ = _make()
        make_solver("oracle-subspace", TASK, seed=0).solve(pb, Budget(), lambda *a, **k: None)


def test_board_reference_session_gets_the_reference_view_only():
    from papergym.leaderboard.board.evaluate import RegistrySolverSession, evaluate_solver

    task = make_task(TASK, n=200, seeds=[0], supervision="views")
    refs = task.instances()[:1]
    ref = evaluate_solver(task, refs, lambda: RegistrySolverSession("oracle-subspace", TASK), {"ddim_steps": 10}, [0])
    assert ref[0]["status"] == "ok" and ref[0]["metrics"]["subspace_error"] < 1e-12
    assert not RegistrySolverSession("pca", TASK).reference_view


def test_frame_average_is_the_top_eigenspace_of_the_mean_projector():
    require("torch", "torch")
    pb, _ = _make()
    hp = {"steps": 20, "ddim_steps": 1, "report_every": 0, "batch_size": 32}
    last = make_solver("diffusion-disentangle", TASK, seed=0, frame_average=0.0, **hp)
    a = last.solve(pb, Budget(), lambda *a, **k: None)
    np.testing.assert_allclose(a["U_hat"], last.last_iterate_U_)
    avg = make_solver("diffusion-disentangle", TASK, seed=0, **hp)
    b = avg.solve(pb, Budget(), lambda *a, **k: None)
    np.testing.assert_allclose(b["U_hat"].T @ b["U_hat"], np.eye(2), atol=1e-10)
    np.testing.assert_allclose(avg.last_iterate_U_, last.last_iterate_U_, atol=1e-6)  # same training path
    assert subspace_error(b["U_hat"], avg.last_iterate_U_) > 0.0
    with pytest.raises(ValueError, match="frame_average"):
        make_solver("diffusion-disentangle", TASK, frame_average=1.0)


@pytest.mark.slow
def test_headline_error_keeps_falling_with_n_on_fresh_seeds():
    """The finite-sample claim: with the tail-averaged frame the subspace error at n = 16,000 is well below that at
    n = 1,000 (the last iterate stalls near 0.013 at both), on fresh instance seeds."""
    require("torch", "torch")
    errs = {}
    for n in (1000, 16000):
        pb, ev = _make(2000, n=n)  # seed 2002 at n = 16,000 lands in the content/style-swapped basin (README)
        slv = make_solver("diffusion-disentangle", TASK, seed=0, ddim_steps=2, report_every=0)
        errs[n] = ev.evaluate(slv.solve(pb, Budget(), lambda *a, **k: None))["subspace_error"]
    assert errs[16000] < 0.7 * errs[1000] and errs[16000] < 0.008
