"""Native vector versions of ``FJSP-v0`` and ``FJSPImprove-v0``: ``num_envs`` independent runs stepped
together (what the leaderboard's evaluator and batched agents use).

``reset(seed=[s_0, .., s_{n-1}])`` (an int ``s`` -> ``s, s+1, ..``; ``None`` -> seeds drawn from
``self.np_random``); row ``i`` is bit-identical to the single env reset with seed ``s_i``. Observations are
the single env's ``Dict`` with a leading run axis; ``.problem`` is the public problem, the same for every
run (each run's instance is in its observations); ``.oracle`` is batched over the runs, ``.oracles`` the
per-run oracles. No autoreset (``AutoresetMode.DISABLED``). ``FJSP-v0`` runs of a family whose instances
have different operation counts (SD1) end at different steps: a finished run keeps its last observation,
reward 0 and ``terminated = True``, and ignores its actions (they are not validated).

The runs are stepped in a Python loop over the single envs (:class:`~papergym.envs.loop_vector.LoopVectorEnv`:
each step's state is structural — job queues, machine orders, the neighbourhood of a solution); the
numerics inside are numpy/numba.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.envs.loop_vector import BatchedLoopOracle, LoopVectorEnv
from papergym.envs.scheduling.fjsp.construct import FJSPEnv
from papergym.envs.scheduling.fjsp.improve import FJSPImproveEnv

__all__ = ["FJSPVectorEnv", "FJSPImproveVectorEnv", "BatchedFJSPOracle"]

BatchedFJSPOracle = BatchedLoopOracle  # the per-run oracles, batched (0 for a finished run)


class _FJSPVector(LoopVectorEnv):
    metadata = {**LoopVectorEnv.metadata, "state_dependent_actions": True}

    def cast_row(self, action: Any) -> int:
        return int(action)

    def validate_action(self, actions: Any) -> np.ndarray:
        """The actions as an ``(n,)`` int array; :class:`~papergym.envs.InvalidActionError` naming the first
        illegal row (finished runs are not checked)."""
        return super().validate_action(actions).astype(np.int64)


class FJSPVectorEnv(_FJSPVector):
    """``num_envs`` runs of :class:`~papergym.envs.scheduling.fjsp.construct.FJSPEnv` (module docstring)."""

    SINGLE = FJSPEnv


class FJSPImproveVectorEnv(_FJSPVector):
    """``num_envs`` runs of :class:`~papergym.envs.scheduling.fjsp.improve.FJSPImproveEnv` (module docstring)."""

    SINGLE = FJSPImproveEnv
