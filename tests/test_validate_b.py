"""papergym.validate in the baselines: :func:`~papergym.validate.boolean`, and the baselines whose private
validators moved to papergym.validate (same values accepted and returned, bad values refused with the
unified message naming the argument)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from papergym.validate import boolean


def _msg(fn, *a, **kw):
    with pytest.raises(ValueError) as exc:
        fn(*a, **kw)
    return str(exc.value)


def test_boolean():
    assert boolean(True, "f") is True and boolean(False, "f") is False
    assert boolean(np.bool_(True), "f") is True and type(boolean(np.bool_(False), "f")) is bool
    for bad in (0, 1, 1.0, "True", "yes", None, np.int64(1), [True]):
        assert _msg(boolean, bad, "reinit") == f"reinit must be True or False, got {bad!r}"


def test_bandit_baselines():
    from papergym.baselines.bandits.comb_ts import BatchedCombTS
    from papergym.baselines.bandits.ftrl_semibandit import hybrid_gamma, solve_ftrl
    from papergym.envs.bandits.semibandit import make_problem

    with pytest.raises(ValueError, match=re.escape("gamma_rule must be one of 'paper', 'code'; got 'book'")):
        hybrid_gamma(10, 3, "book")
    with pytest.raises(ValueError, match=re.escape("regulariser must be one of 'hybrid', 'log-barrier', 'shannon'")):
        solve_ftrl(np.zeros(4), 1.0, 2, "tsallis")
    with pytest.raises(ValueError, match=re.escape("m must be an integer in [1, 4], got 5")):
        solve_ftrl(np.zeros(4), 1.0, 5)
    with pytest.raises(ValueError, match=re.escape("m must be an integer >= 1, got True")):
        solve_ftrl(np.zeros(4), 1.0, True)
    assert solve_ftrl(np.zeros(4), 1.0, np.int64(2)).x.sum() == pytest.approx(2.0)
    with pytest.raises(ValueError, match=re.escape("prior_a must be a number in [1, inf), got 0.5")):
        BatchedCombTS(make_problem(4, 2), seeds=[0], prior_a=0.5)


def test_solver_baselines():
    from papergym.baselines.solvers.continual import EWC, ExperienceReplay, Joint
    from papergym.baselines.solvers.data_selection import ConfSelect, MultiSampleAcc
    from papergym.baselines.solvers.dual_lssvm import DualLSSVM
    from papergym.baselines.solvers.persistent_homology import Flooder, Rips
    from papergym.baselines.solvers.plrf_sgd import SGDMomentum

    # valid values: same types and values as before
    s = SGDMomentum(c2=1, momentum=np.float64(0.5))
    assert (type(s.c2), s.c2, s.momentum) == (float, 1.0, 0.5)
    d = DualLSSVM(sigma=np.float32(0.5), n_sel=np.int64(3), max_halvings=0)
    assert d.sigma == 0.5 and d.gamma is None and type(d.n_sel) is int and d.max_halvings == 0
    er = ExperienceReplay(buffer_size=np.int64(7))
    assert type(er.buffer_size) is int and er.buffer_size == 7
    assert EWC(ewc_lambda=0).ewc_lambda == 0.0 and Joint(reinit=np.bool_(True)).reinit is True
    m = MultiSampleAcc(n_samples=np.int64(4), temperature=2, stop_fraction=1)
    assert (m.K, m.T, m.stop_fraction) == (4, 2.0, 1.0) and type(m.T) is float
    assert ConfSelect(hardest=True).hardest is True
    f = Flooder(n_landmarks=None, points_per_edge=2)
    assert f.n_landmarks is None and f.points_per_edge == 2
    assert Rips(sparse=None).sparse is None

    # bad values: the unified message, naming the argument
    for make, want in [
        (lambda: SGDMomentum(momentum=1.0), "momentum must be a number in (0, 1.0), got 1.0"),
        (lambda: DualLSSVM(sigma=-1.0), "sigma must be a positive finite number, got -1.0"),
        (lambda: DualLSSVM(n_sel=1), "n_sel must be an integer >= 2, got 1"),
        (lambda: DualLSSVM(hessian="bfgs"), "hessian must be one of"),
        (lambda: ExperienceReplay(buffer_size=0), "buffer_size must be an integer >= 1, got 0"),
        (lambda: EWC(ewc_lambda=-1), "ewc_lambda must be a non-negative finite number, got -1"),
        (lambda: Joint(reinit=1), "reinit must be True or False, got 1"),
        (lambda: MultiSampleAcc(stop_fraction=1.5), "stop_fraction must be a number in (0, 1], got 1.5"),
        (lambda: MultiSampleAcc(temperature=True), "temperature must be a positive finite number, got True"),
        (lambda: ConfSelect(include_eos="no"), "include_eos must be True or False, got 'no'"),
        (lambda: Flooder(points_per_edge=1), "points_per_edge must be an integer >= 2, got 1"),
        (lambda: Flooder(dtype="float16"), "dtype must be one of 'float32', 'float64'; got 'float16'"),
        (lambda: Flooder(n_landmarks=0), "n_landmarks must be an integer >= 1, got 0"),
    ]:
        with pytest.raises(ValueError, match=re.escape(want)):
            make()


def test_bilevel_and_other_baselines():
    from papergym.baselines.solvers.deep_gd import Adam
    from papergym.baselines.solvers.simple_bilevel import DBGDOriginal, TwoPhase
    from papergym.baselines.solvers.solve_ivp import SolveIVP

    assert DBGDOriginal(g_hat=np.float32(0.25)).g_hat == 0.25 and DBGDOriginal().g_hat is None
    assert TwoPhase(reenter=1).reenter == 1.0
    a = Adam(beta1=0, beta2=np.float64(0.5))
    assert (a.b1, a.b2) == (0.0, 0.5)
    for make, want in [
        (lambda: DBGDOriginal(g_hat=float("nan")), "g_hat must be a finite number, got nan"),
        (lambda: TwoPhase(reenter=0.5), "reenter must be a number in [1, inf), got 0.5"),
        (lambda: Adam(beta2=1.0), "beta2 must be a number in [0, 1), got 1.0"),
        (lambda: Adam(eps=0), "eps must be a positive finite number, got 0"),
        (lambda: SolveIVP(method="Euler"), "method must be one of"),
    ]:
        with pytest.raises(ValueError, match=re.escape(want)):
            make()
