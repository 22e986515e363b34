"""The solvers of ``agents/solvers`` and the bandit agents of ``agents/bandits`` validate their hyperparameters
with :mod:`papergym.validate`: valid values keep their type and value (numpy numbers and ints count as
floats), the boundaries of each range stay where they were, and a bad value raises ``ValueError`` naming the
argument in the one wording of :mod:`papergym.validate`; no module keeps a private copy of a validator."""

from __future__ import annotations

import math
import re

import gymnasium as gym
import numpy as np
import pytest

from papergym.agents.bandits.ftpl_frechet import BatchedFTPLFrechet
from papergym.agents.bandits.gp_ucb import ENV_ID as GP_ENV
from papergym.agents.bandits.gp_ucb import GPUCB, check_x1
from papergym.agents.solvers import adasdbo, dbgd, lip_resnet, local_sgd
from papergym.agents.solvers.adasdbo import AdaSDBO
from papergym.agents.solvers.agf import AGF, agf_diagonal
from papergym.agents.solvers.bcd import BCD
from papergym.agents.solvers.dana import DANA
from papergym.agents.solvers.dbgd import DBGD
from papergym.agents.solvers.diffusion_disentangle import DiffusionDisentangle
from papergym.agents.solvers.lear import LEAR
from papergym.agents.solvers.lip_resnet import LipResNet
from papergym.agents.solvers.local_sgd import LocalSGD
from papergym.agents.solvers.lssvm_common import rbf_kernel
from papergym.agents.solvers.nystrom_lssvm import NystromLSSVM
from papergym.agents.solvers.radagrad import Preconditioner, RiemannianLowRank
from papergym.agents.solvers.symmpo import PreferenceOptimizer
from papergym.agents.solvers.ufo_rl import UFORL
from papergym.baselines.solvers.distributed import MinibatchSGD, Scaffold
from papergym.envs.bandits.semibandit import make_problem
from papergym.envs.spec import ProblemSpec


def _raises(fn, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        fn()


# ------------------------------------------------------------------------------ valid input is unchanged
def test_valid_values_keep_type_and_value_across_number_types():
    a = AdaSDBO(gamma=np.float32(0.5), m0=2, v_radius=None, gamma_x=0)
    assert (a.gamma_y, a.gamma_v, a.m0, a.gamma_x, a.v_radius) == (0.5, 0.5, 2.0, 0.0, None)
    assert type(a.m0) is float and type(a.gamma_y) is float
    b = BCD(gamma=np.int64(2), inner_steps=np.int64(3))
    assert (b.gamma, b.inner_steps) == (2.0, 3) and type(b.inner_steps) is int and type(b.gamma) is float
    d = DANA(c2=0, c3=np.float64(0.25), g3_scale=0.0, delta=7)
    assert (d.c2, d.c3, d.g3_scale, d.delta) == (0.0, 0.25, 0.0, 7.0) and type(d.delta) is float
    g = DBGD(beta=1, eta=None, p=0, c_armijo=0.5, max_growth=1, line_search=np.bool_(False))
    assert (g.beta, g.eta, g.p, g.c_armijo, g.max_growth, g.line_search) == (1.0, None, 0.0, 0.5, 1.0, False)
    assert type(g.line_search) is bool
    assert LocalSGD(lr=1).lr == 1.0 and LocalSGD(average="uniform").average == "uniform"
    s = PreferenceOptimizer(lam=0, delta=-1, beta1=2, epochs=np.int64(3), stop_fraction=1, batch_size=np.int32(8))
    assert (s.lam, s.delta, s.beta1, s.beta2, s.epochs, s.stop_fraction, s.batch_size) == (
        0.0,
        -1.0,
        2.0,
        None,
        3,
        1.0,
        8,
    )
    assert type(s.epochs) is int and type(s.batch_size) is int
    n = NystromLSSVM(eig_tol=np.float64(1e-12), sigma=1, gamma=None, continuation=False)
    assert (n.eig_tol, n.sigma, n.gamma, n.continuation) == (1e-12, 1.0, None, False)
    assert RiemannianLowRank(lr=None).lr is None and RiemannianLowRank(lr=2).lr == 2.0
    assert Preconditioner("adamw", (2, 3)).kind == "adamw"
    assert AGF(eta=0.5).eta == 0.5 and AGF(memory=False).memory is False
    assert UFORL(include_eos=np.bool_(True)).include_eos is True


def test_range_boundaries_stay_where_they_were():
    dd = DiffusionDisentangle(t_min=0.5, t_start=1, probe_t=0.5, frame_average=0, p_uncond=0, report_every=0)
    assert (dd.t_min, dd.t_start, dd.probe_t, dd.frame_average, dd.p_uncond, dd.report_every) == (
        0.5,
        1.0,
        0.5,
        0.0,
        0.0,
        0,
    )
    assert DiffusionDisentangle(beta_min=2.0, beta_max=2.0).beta_max == 2.0
    _raises(lambda: DiffusionDisentangle(t_min=0.2, t_start=0.2), "t_start must be a number in (0.2, 1]")
    _raises(lambda: DiffusionDisentangle(t_min=0.2, probe_t=0.19), "probe_t must be a number in [0.2, 1]")
    _raises(lambda: DiffusionDisentangle(frame_average=1.0), "frame_average must be a number in [0, 1)")
    _raises(lambda: DiffusionDisentangle(beta_min=2.0, beta_max=1.5), "beta_max must be a number in [2.0, inf)")
    _raises(lambda: DBGD(c_armijo=1.0), "c_armijo must be a number in (0, 1)")
    _raises(lambda: DBGD(max_growth=0.99), "max_growth must be a number in [1, inf)")
    _raises(lambda: NystromLSSVM(eig_tol=1.0), "eig_tol must be a number in (0, 1)")
    _raises(lambda: AGF(eta=0.5000001), "eta must be a number in (0, 0.5]")
    _raises(lambda: PreferenceOptimizer(stop_fraction=0), "stop_fraction must be a number in (0, 1]")
    lr = LipResNet(pct_start=1.0 - 1e-9, report_fraction=1, stop_fraction=1, width=None, epochs=None)
    assert (lr.pct_start, lr.report_fraction, lr.width, lr.epochs) == (1.0 - 1e-9, 1.0, None, None)
    _raises(lambda: LipResNet(pct_start=1.0), "pct_start must be a number in (0, 0.999999999]")
    _raises(lambda: LipResNet(width=3), "width must be an integer >= 4, got 3")
    assert LipResNet(arch="G_hat", width=1).width == 1


# ---------------------------------------------------------------------------- bad input names the argument
@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: AdaSDBO(gamma=0), "gamma must be a positive finite number, got 0"),
        (lambda: AdaSDBO(v_radius=-1.0), "v_radius must be a positive finite number, got -1.0"),
        (lambda: AdaSDBO(combine="both"), "combine must be one of 'atc', 'cta'; got 'both'"),
        (lambda: BCD(gamma=True), "gamma must be a positive finite number, got True"),
        (lambda: BCD(inner_steps=1.0), "inner_steps must be an integer >= 1, got 1.0"),
        (lambda: DANA(c2=-0.1), "c2 must be a non-negative finite number, got -0.1"),
        (lambda: DANA(delta=0), "delta must be a positive finite number, got 0"),
        (lambda: DANA(schedule="cosine"), "schedule must be one of 'decaying', 'constant'; got 'cosine'"),
        (lambda: DBGD(p=-1), "p must be a non-negative finite number, got -1"),
        (lambda: DBGD(line_search=1), "line_search must be True or False, got 1"),
        (lambda: LocalSGD(lr=math.inf), "lr must be a positive finite number, got inf"),
        (lambda: LocalSGD(average="mean"), "average must be one of 'last', 'uniform'; got 'mean'"),
        (lambda: NystromLSSVM(gn_tol="1e-10"), "gn_tol must be a positive finite number, got '1e-10'"),
        (lambda: NystromLSSVM(lm_mu0=0.0), "lm_mu0 must be a positive finite number, got 0.0"),
        (lambda: RiemannianLowRank(lr=-1), "lr must be a positive finite number, got -1"),
        (lambda: Preconditioner("sgd", (2, 2)), "kind must be one of 'identity', 'adagrad', 'adamw'; got 'sgd'"),
        (lambda: PreferenceOptimizer(delta=math.nan), "delta must be a finite number, got nan"),
        (lambda: PreferenceOptimizer(epochs=0), "epochs must be an integer >= 1, got 0"),
        (lambda: DiffusionDisentangle(width=0), "width must be an integer >= 1, got 0"),
        (lambda: DiffusionDisentangle(init="lda"), "init must be one of"),
        (lambda: LEAR(time_fraction=0), "time_fraction must be a positive finite number, got 0"),
        (lambda: LEAR(batch_size=np.float64(8)), "batch_size must be an integer >= 1, got"),
        (lambda: LEAR(w_kl=-1), "w_kl must be a non-negative finite number, got -1"),
        (lambda: LEAR(use_hsic="yes"), "use_hsic must be True or False, got 'yes'"),
        (lambda: LEAR(selection_score="l2"), "selection_score must be one of"),
        (lambda: LipResNet(dtype="float16"), "dtype must be one of 'float32', 'float64'; got 'float16'"),
        (lambda: LipResNet(ghat_norm="l1"), "ghat_norm must be one of 'mixed', 'l2'; got 'l1'"),
        (lambda: LipResNet(lr_min=0), "lr_min must be a positive finite number, got 0"),
        (lambda: AGF(eta=True), "eta must be a number in (0, 0.5], got True"),
        (lambda: UFORL(include_eos=0), "include_eos must be True or False, got 0"),
    ],
)
def test_bad_hyperparameters_raise_the_unified_message(make, message):
    _raises(make, message)


def test_agf_math_functions_check_their_arguments():
    X, y = np.eye(3), np.array([1.0, 0.5, 0.25])
    _raises(lambda: agf_diagonal(X, y, 1e-3, lr=-1.0), "lr must be a positive finite number, got -1.0")
    _raises(lambda: agf_diagonal(X, y, 1e-3, phase=0.0), "phase must be a positive finite number, got 0.0")
    assert agf_diagonal(X, y, 1e-3, lr=np.float64(1.0)) == agf_diagonal(X, y, 1e-3, lr=1)


def test_rbf_sigma_is_checked_after_float_conversion():
    t = np.linspace(0.0, 1.0, 4)
    np.testing.assert_array_equal(rbf_kernel(t, t, np.array(0.5)), rbf_kernel(t, t, 0.5))  # a 0-d array still counts
    _raises(lambda: rbf_kernel(t, t, -0.5), "sigma must be a positive finite number, got -0.5")
    _raises(lambda: rbf_kernel(t, t, math.inf), "sigma must be a positive finite number, got inf")


# ----------------------------------------------------------------------------------------- bandit agents
def _gp_problem() -> ProblemSpec:
    C = np.linspace(0.0, 1.0, 5)[:, None]
    return ProblemSpec(
        GP_ENV,
        gym.spaces.Discrete(len(C)),
        gym.spaces.Box(-np.inf, np.inf, (1,), np.float64),
        10,
        {"d": 1, "kernel": "se", "lengthscale": 0.2, "B": 1.0, "candidates": C, "action_mode": "discrete"},
    )


def test_gp_ucb_checks():
    ag = GPUCB(_gp_problem(), x1="random", beta_sqrt=np.float32(2.0))
    assert ag.x1 == "random" and ag.beta_sqrt_fixed == 2.0
    _raises(lambda: GPUCB(_gp_problem(), x1="left"), "x1 must be one of 'centre', 'random'; got 'left'")
    _raises(lambda: GPUCB(_gp_problem(), jitter=0.0), "jitter must be a positive finite number, got 0.0")


def test_ftpl_frechet_checks():
    problem = make_problem(5, 2, 10)
    ag = BatchedFTPLFrechet(problem, seeds=[0], cap=np.int64(7), gr_only_on_loss=np.bool_(False))
    assert ag.cap == 7 and type(ag.cap) is int and ag.gr_only_on_loss is False
    _raises(lambda: BatchedFTPLFrechet(problem, seeds=[0], cap=0), "cap must be an integer >= 1, got 0")
    _raises(lambda: BatchedFTPLFrechet(problem, seeds=[0], gr="fancy"), "gr must be one of")
    _raises(lambda: BatchedFTPLFrechet(problem, seeds=[0], gr_only_on_loss=1), "gr_only_on_loss must be True or False")
    with pytest.raises(ValueError, match="^gr must be one of .*conditional geometric resampling.*not implemented"):
        BatchedFTPLFrechet(problem, seeds=[0], gr="conditional")


# ------------------------------------------------------------------------------ no private copies left
def test_no_module_keeps_its_own_copy_of_a_validator():
    for mod, name in [
        (adasdbo, "check_positive"),
        (dbgd, "check_positive"),
        (local_sgd, "check_lr"),
        (lip_resnet, "pos_int"),
        (lip_resnet, "pos_float"),
    ]:
        assert not hasattr(mod, name), f"{mod.__name__}.{name}"
    assert check_x1("centre") == "centre"  # a domain check (the first GP query point), shared by the GP agents
    _raises(lambda: check_x1(None), "x1 must be one of 'centre', 'random'; got None")
    _raises(lambda: Scaffold(server_lr=0), "server_lr must be a positive finite number, got 0")
    _raises(lambda: MinibatchSGD(lr=-1), "lr must be a positive finite number, got -1")
