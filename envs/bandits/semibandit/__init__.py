"""m-set semi-bandit (``MSetSemiBandit-v0``): the action space and the public problem.

Shared part (imported by every semi-bandit agent)
-------------------------------------------------
* :class:`MSet` -- the action space: a :class:`gymnasium.spaces.MultiBinary` subclass of the 0/1
  vectors of length ``d`` with exactly ``m`` ones. ``sample()`` draws a uniform ``m``-subset (so
  ``check_env`` and random rollouts only play legal actions); ``contains()`` checks the shape, the
  0/1 values and ``sum == m``.
* :func:`make_problem` -- the public :class:`~papergym.envs.spec.ProblemSpec` (``d``, ``m``, the loss
  range ``[0, 1]``, the horizon ``n``), the same for every seed and instance family.

The environment (``MSetSemiBandit-v0``)
---------------------------------------
Environment of J. Zhan et al., *Follow-the-Perturbed-Leader Approaches Best-of-Both-Worlds for the m-Set
Semi-Bandit Problems* (arXiv 2504.07307, NeurIPS 2025); see ``docs/papers/mset-semibandit.md`` (tags: see
docs/conventions.md).

``MSetSemiBanditEnv``            the Gymnasium env (one run; see its docstring for spaces and kwargs).
``MSetSemiBanditVectorEnv``      native vector env (``num_envs`` seeds stepped together in numpy / numba).
``MSetSemiBanditOracle``         per-run oracle; ``BatchedMSetSemiBanditOracle`` the vector env's.
``BatchedMSet``                  the vector env's action space (``(n, d)``, every row an m-set);
                                 ``gymnasium.vector.utils.batch_space(MSet(d, m), n)`` returns it.
``INSTANCES``, ``COMPARE_DEFAULTS``, :func:`sca_signs` (the sign sequence of the adversarial family).

Instance families (``g`` = ``gap``; ``lo`` the mean loss of the optimal arms, ``hi`` of the others):

* ``stochastic`` [code ``Stochastic``]: ``lo = 0.5 (1 - g)``, ``hi = 0.5 (1 + g)``, constant in ``t``.
* ``stochastically-constrained-adversarial`` [code ``Adversarial``]: the stochastic means plus
  ``s(t) b`` for every arm, ``b = 0.5 (1 - g)``, ``s(t) = +1`` if ``floor(ln t / ln 1.1) mod 10 < 5``
  else ``-1`` (``t >= 1``; evaluated as ``floor(np.log(t) / np.log(1.1))``, :func:`sca_signs`). Means
  stay in ``[0, 1]`` (``{1 - g, 0}`` optimal, ``{1, g}`` others) and every gap stays ``g``.
* ``oblivious-switching`` [design]: ``n_switches`` switch times drawn *without replacement* from
  ``{2, .., n}`` and sorted (rather than i.i.d. ``U{1..n}``; distinct and ``>= 2`` so that every one of the
  ``n_switches + 1`` segments is non-empty -- requires ``n_switches <= n - 1``); segment ``k`` has an
  optimal m-set at ``lo = 0.5 - g/2``, the rest at ``hi = 0.5 + g/2``. Segment 0 uses the permuted arm
  ids below, each later segment a fresh uniform m-set (which may coincide with the previous one: the
  switch then changes nothing; :meth:`MSetSemiBanditOracle.change_points` lists the effective changes).
* ``worst-case`` [design]: ``lo = 0.5 - epsilon`` on a hidden m-set, ``hi = 0.5``;
  ``epsilon=None`` -> ``min(1/4 sqrt(d / (n m)), 1/2)`` (capped so that every mean stays in ``[0, 1]``;
  an explicit ``epsilon`` must lie in ``(0, 1/2]``).

Arm ids are permuted per seed: the optimal set of the stationary families (segment 0 of the switching
family) is the first ``m`` entries of ``rng.permutation(d)``, ``rng`` built from
``run_seeds(seed).instance``; the switching family then draws its switch times, then one
``rng.permutation(d)[:m]`` per later segment, from the same generator. Losses are Bernoulli,
``l_{t,i} = 1{U_{t,i} < mu_{t,i}}``, with ``d`` uniforms per round (``UniformStream.take(d)``: arm ``i``
of round ``t`` uses the ``((t - 1) d + i)``-th number of ``run_seeds(seed).noise``), drawn before the
action and independently of it: every agent on a seed faces the same loss matrix [design].

Representation (never an ``(n, d)`` array per run): each run stores its segment starts ``(S,)``, the
segment means ``(S, d)`` (``S = 1`` except for switching) and, for the adversarial family, the shared
read-only sign array ``int8 (n,)`` with ``b``; ``mu_t = seg_mu[segment(t)] + b s(t)``.

Oracle [design]: dynamic per-round regret ``<mu_t, a> - min_{|a'| = m} <mu_t, a'>`` and the
static increment ``<mu_t, a - a_fix>`` are computed from the *segment* means (the common shift
``b s(t)`` cancels exactly in both since ``|a| = |a_fix| = m``), as the difference of two sums taken in
the same arm order, so they are exactly 0 for the optimal / fixed set. ``best_set()`` (the m smallest
entries of ``sum_t mu_t``) is found without summing floats: in every family the optimal arms of a
segment share the mean ``lo`` and the others ``hi > lo``, and the shift is common, so the best fixed set
is the ``m`` arms that are optimal in the most rounds (ties -> lowest index), ``O(d S)``.
``realised_best_set()`` regenerates the run's uniforms in chunks (``O(d)`` memory per round of a chunk).

Actions: a ``(d,)`` array (``(n, d)`` in the vector env) of bool, integer or float dtype with entries in
``{0, 1}`` and exactly ``m`` ones; lists are accepted. Broken rules (``shape``, ``dtype``, ``finite``,
``values``, ``size``) raise :class:`~papergym.envs.InvalidActionError` before anything changes.
Observation: NaN at the unobserved arms would not lie inside ``Box(0, 1)``, so the env reports
``0`` at the arms not chosen plus the ``observed`` mask. ``reset(seed=None)`` draws the
run seed from ``self.np_random`` (Gymnasium's convention), as the other bandit envs do. Vector env
``info``: ``{"t": (n,) ints, "_t": (n,) True}``.

Modules
-------
``space``      the shared part: :class:`MSet`, :class:`BatchedMSet`, :func:`make_problem`, action validation.
``instances``  the instance families: configuration checks, the per-run segments and means, the step engine.
``oracle``     the per-run and batched oracles: means, optimal and best fixed sets, dynamic and static regret.
``env``        the single and vector Gymnasium envs and the defaults of ``papergym compare``.
"""

from papergym.envs.bandits.semibandit.env import (
    COMPARE_DEFAULTS,
    REGRET_NAME,  # noqa: F401  (read from the entry point's module by papergym compare and the board)
    MSetSemiBanditEnv,
    MSetSemiBanditVectorEnv,
)
from papergym.envs.bandits.semibandit.instances import INSTANCES, sca_signs
from papergym.envs.bandits.semibandit.oracle import BatchedMSetSemiBanditOracle, MSetSemiBanditOracle
from papergym.envs.bandits.semibandit.space import ENV_ID, BatchedMSet, MSet, make_problem, observation_space

__all__ = [
    "ENV_ID",
    "MSet",
    "make_problem",
    "observation_space",
    # the environment
    "INSTANCES",
    "COMPARE_DEFAULTS",
    "sca_signs",
    "BatchedMSet",
    "MSetSemiBanditEnv",
    "MSetSemiBanditVectorEnv",
    "MSetSemiBanditOracle",
    "BatchedMSetSemiBanditOracle",
]
