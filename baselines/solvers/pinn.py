"""``pinn``: a physics-informed neural network, a baseline of ``NystromODE-v0`` (torch extra).

``docs/papers/nystrom-ode.md`` [design: the paper's PINN configuration is not published]. Lagaris,
Likas & Fotiadis (1998) / Raissi, Perdikaris & Karniadakis (2019): a multilayer perceptron
``N_theta: [-1, 1] -> R^p`` is trained so that ``y_hat(t) = N_theta(s(t))`` satisfies the ODE at the
collocation times and the initial conditions at ``t0``:

    s(t) = 2 (t - t0) / (tf - t0) - 1                                    (input scaled to [-1, 1])
    L(theta) = mean_{i, c} (y_hat^(K)(t_i) - f(t_i, y_hat(t_i)[, y_hat'(t_i)]))_c^2
               + w_ic * sum_{l < K, c} (y_hat^(l)(t0) - ic[l, c])^2         (K = order, w_ic = 100)

``f`` is the public explicit right-hand side ``problem.rhs`` (for linear problems this is the same
equation as the linear form, solved for ``y^(K)``). ``theta`` is trained by Adam (lr ``1e-3``,
``steps`` full-batch steps over all collocation times), then optionally by ``lbfgs_steps`` L-BFGS
iterations (strong-Wolfe line search); everything in float64.

Derivatives. ``y_hat'`` and ``y_hat''`` are the exact derivatives of the network with respect to
``t``; instead of nested ``torch.autograd.grad`` calls (one per output component and order, each
building a second graph) they are propagated forward through the layers alongside the values
(Taylor-mode forward differentiation, exact, not finite differences):

    z = W a + b,  z' = W a',  z'' = W a'';   a = tanh z,  a' = (1 - a^2) z',
    a'' = (1 - a^2) z'' - 2 a (1 - a^2) z'^2;     input: a = s, a' = ds/dt = 2 / (tf - t0), a'' = 0

so one backward pass gives the loss gradient (tests compare with ``torch.autograd``). ``f`` is a numpy
function; it enters the graph through a ``torch.autograd.Function`` whose backward multiplies by the
public Jacobians ``problem.jac`` (``df/dy``, ``df/dy'``).

Initialisation [design]: Glorot-normal weights, zero biases (Raissi et al.'s PINN convention), drawn
from a ``torch.Generator`` seeded from the solver seed (``numpy.random.default_rng(seed)``), so a run
is deterministic under its seed without touching torch's global RNG (the brief's
``torch.manual_seed``, scoped). ``torch.set_num_threads(1)`` inside :meth:`PINN.solve` (restored on
return), as BLAS threads are pinned to 1 in the runner.

Budget and anytime curve. One optimiser step (an Adam step or one L-BFGS iteration) is one
iteration; one loss evaluation costs ``n`` work units (one residual at one collocation time, the
task's unit). Training stops early, without error, at ``budget.max_iterations`` steps, at
``budget.max_work`` units, or once ``stop_fraction * budget.max_seconds`` have elapsed (the current
network is returned; ``meta["stopped"]`` says why). Every ``report_every`` steps the current
predictions are passed to ``report(solution, iteration=..., work=...)``. With ``keep_best`` (default)
the returned network is the iterate of lowest training loss (a label-free choice); otherwise the last
one, except that a non-finite loss stops training and returns the network of the last report.

Solution: ``{"y": (1000, p) or (1000,), "meta": {"fit_seconds" (training time), "iterations",
"work", "loss" (final training loss), "stopped"}}``.

Hyperparameters (enter the cell key)
------------------------------------
=================  ==========  ==================================================================
name               default     provenance
=================  ==========  ==================================================================
``width``          ``50``      [design] neurons per hidden layer (MLP 3 x 50)
``depth``          ``3``       [design] hidden layers (tanh)
``steps``          ``5000``    [design] Adam steps (default; paper-scale 20,000)
``lr``             ``1e-3``    [design] Adam learning rate
``lbfgs_steps``    ``0``       [design] L-BFGS iterations after Adam (paper-scale 500)
``ic_weight``      ``100.0``   [design] weight of the squared initial-condition error
``report_every``   ``500``     [design] steps between anytime reports (``0``: final only)
``stop_fraction``  ``0.9``     [design] fraction of ``max_seconds`` after which training stops
``keep_best``      ``True``    [design] return the iterate of lowest training loss (label-free;
                               Adam at lr 1e-3 has loss spikes, sometimes in the last steps)
=================  ==========  ==================================================================

Deviations from the usual PINN recipe: derivatives by forward propagation (above) rather than ``autograd.grad``
(same values); the seed goes to a local ``torch.Generator`` rather than ``torch.manual_seed``.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.envs.tasks.base import Budget
from papergym.torch_threads import torch_threads
from papergym.validate import boolean, in_range, positive_float, positive_int

__all__ = ["PINN"]

TASK_ID = "NystromODE-v0"


def _rhs_function(torch: Any) -> Any:
    """``f(t, y[, y'])`` of the problem as a torch op: numpy forward, backward by ``problem.jac``."""

    class RHS(torch.autograd.Function):
        @staticmethod
        def forward(ctx, y, dy, problem, t, order):
            y_np = y.detach().numpy()
            dy_np = None if dy is None else dy.detach().numpy()
            args = (t, y_np, dy_np) if order == 2 else (t, y_np)
            f = np.asarray(problem.rhs(*args), dtype=np.float64).reshape(y_np.shape)
            f_y, f_dy = problem.jac(*args)
            k, p = y_np.shape
            ctx.f_y = torch.from_numpy(np.asarray(f_y, dtype=np.float64).reshape(k, p, p))
            ctx.f_dy = None if f_dy is None else torch.from_numpy(np.asarray(f_dy, dtype=np.float64).reshape(k, p, p))
            ctx.has_dy = dy is not None
            return torch.from_numpy(f)

        @staticmethod
        def backward(ctx, g):
            # f_y[k, i, j] = d f_i / d y_j  ->  dL/dy_j = sum_i g_i f_y[i, j]
            gy = torch.einsum("ki,kij->kj", g, ctx.f_y)
            gdy = None
            if ctx.has_dy:
                gdy = torch.zeros_like(g) if ctx.f_dy is None else torch.einsum("ki,kij->kj", g, ctx.f_dy)
            return gy, gdy, None, None, None

    return RHS


class PINN:
    """Physics-informed MLP (module docstring). ``PINN(seed=None, width=50, depth=3, steps=5000,
    lr=1e-3, lbfgs_steps=0, ic_weight=100.0, report_every=500, stop_fraction=0.9, keep_best=True)``."""

    def __init__(
        self,
        *,
        seed: Any = None,
        width: int = 50,
        depth: int = 3,
        steps: int = 5000,
        lr: float = 1e-3,
        lbfgs_steps: int = 0,
        ic_weight: float = 100.0,
        report_every: int = 500,
        stop_fraction: float = 0.9,
        keep_best: bool = True,
    ):
        self.width = positive_int(width, "width", 1)
        self.depth = positive_int(depth, "depth", 1)
        self.steps = positive_int(steps, "steps", 0)
        self.lr = positive_float(lr, "lr")
        self.lbfgs_steps = positive_int(lbfgs_steps, "lbfgs_steps", 0)
        self.ic_weight = positive_float(ic_weight, "ic_weight", allow_zero=True)
        self.report_every = positive_int(report_every, "report_every", 0)
        self.stop_fraction = in_range(stop_fraction, "stop_fraction", 0, 1.0, high_closed=True)
        self.keep_best = boolean(keep_best, "keep_best")
        self.seed = seed
        # the training-loss history (one entry per optimiser step), for tests and diagnostics
        self.losses: list[float] = []

    # ------------------------------------------------------------------------------------- network
    def _init_params(self, torch: Any, p: int) -> list[Any]:
        gen = torch.Generator().manual_seed(int(np.random.default_rng(self.seed).integers(2**62)))
        sizes = [1] + [self.width] * self.depth + [p]
        params = []
        for fan_in, fan_out in itertools.pairwise(sizes):
            std = math.sqrt(2.0 / (fan_in + fan_out))  # Glorot normal
            W = torch.randn(fan_out, fan_in, generator=gen, dtype=torch.float64) * std
            params += [W.requires_grad_(), torch.zeros(fan_out, dtype=torch.float64, requires_grad=True)]
        return params

    @staticmethod
    def _forward(torch: Any, params: list[Any], s: Any, ds: float, n_der: int) -> list[Any]:
        """``[y, y', y'']`` (first ``n_der + 1``) of the network at scaled inputs ``s`` ``(k, 1)``;
        derivatives with respect to ``t`` (``ds = ds/dt``), propagated forward (module docstring)."""
        a = s
        da = torch.full_like(s, ds) if n_der >= 1 else None
        dda = torch.zeros_like(s) if n_der >= 2 else None
        n_layers = len(params) // 2
        for li in range(n_layers):
            W, b = params[2 * li], params[2 * li + 1]
            z = a @ W.T + b
            dz = da @ W.T if da is not None else None
            ddz = dda @ W.T if dda is not None else None
            if li == n_layers - 1:  # linear output layer
                return [z] + ([dz] if dz is not None else []) + ([ddz] if ddz is not None else [])
            a = torch.tanh(z)
            g = 1.0 - a * a
            if ddz is not None:
                dda = g * ddz - 2.0 * a * g * dz * dz
            if dz is not None:
                da = g * dz
        raise AssertionError("unreachable")

    # --------------------------------------------------------------------------------------- solve
    def solve(self, problem: Any, budget: Budget | None = None, report: Callable[..., None] | None = None) -> dict:
        import torch

        budget = budget if budget is not None else Budget()
        with torch_threads(1):
            return self._solve(torch, problem, budget, report)

    def _solve(self, torch: Any, problem: Any, budget: Budget, report: Callable[..., None] | None) -> dict:
        start = time.perf_counter()
        K, p = int(problem.order), int(problem.dim)
        if K not in (1, 2):
            raise ValueError(f"problem.order must be 1 or 2, got {K}")
        t0, tf = float(problem.t0), float(problem.tf)
        t_train = np.asarray(problem.t_train, dtype=np.float64)
        n = len(t_train)
        ic = torch.from_numpy(np.asarray(problem.ic, dtype=np.float64).reshape(K, p).copy())
        scale = 2.0 / (tf - t0)
        # inputs: the collocation times then t0 (the initial-condition row), one forward pass
        t_all = np.concatenate([t_train, [t0]])
        s_all = torch.from_numpy((scale * (t_all - t0) - 1.0).reshape(-1, 1))
        t_q = np.asarray(problem.t_query, dtype=np.float64)
        s_q = torch.from_numpy((scale * (t_q - t0) - 1.0).reshape(-1, 1))
        rhs = _rhs_function(torch).apply
        params = self._init_params(torch, p)

        def loss_fn() -> Any:
            ders = self._forward(torch, params, s_all, scale, K)
            y, dy = ders[0][:n], (ders[1][:n] if K == 2 else None)
            f = rhs(y, dy, problem, t_train, K)
            res = ders[K][:n] - f
            ic_err = torch.stack([ders[l][n] - ic[l] for l in range(K)])
            return torch.mean(res * res) + self.ic_weight * torch.sum(ic_err * ic_err)

        def predict() -> np.ndarray:
            with torch.no_grad():
                y = self._forward(torch, params, s_q, scale, 0)[0].numpy().copy()
            return y[:, 0] if p == 1 else y

        max_it = budget.max_iterations
        max_w = budget.max_work
        t_stop = None if budget.max_seconds is None else self.stop_fraction * float(budget.max_seconds)
        total = self.steps + self.lbfgs_steps
        if max_it is not None:
            total = min(total, int(max_it))
        self.losses = []
        it = 0
        work = 0.0
        stopped = "completed"
        snapshot = [q.detach().clone() for q in params]
        last_loss = math.nan
        best_loss, best = math.inf, None

        def out_of_budget() -> str | None:
            if max_it is not None and it >= max_it:
                return "max_iterations"
            if max_w is not None and work + n > max_w:
                return "max_work"
            if t_stop is not None and time.perf_counter() - start >= t_stop:
                return "max_seconds"
            return None

        def anytime() -> None:
            nonlocal snapshot
            snapshot = [q.detach().clone() for q in params]
            if report is not None:
                report(
                    {"y": predict(), "meta": {"iterations": it, "work": work, "loss": last_loss}},
                    iteration=it,
                    work=work,
                )

        # ---- Adam
        opt = torch.optim.Adam(params, lr=self.lr, foreach=True)
        n_adam = min(self.steps, total)
        while it < n_adam:
            why = out_of_budget()
            if why is not None:
                stopped = why
                break
            opt.zero_grad(set_to_none=True)
            loss = loss_fn()
            lv = float(loss.detach())
            if not math.isfinite(lv):
                stopped = "non-finite loss"
                break
            if self.keep_best and lv < best_loss:  # the parameters this loss belongs to (before the step)
                best_loss = lv
                best = [q.detach().clone() for q in params]
            loss.backward()
            opt.step()
            it += 1
            work += n
            last_loss = lv
            self.losses.append(lv)
            if self.report_every and it % self.report_every == 0:
                anytime()

        # ---- L-BFGS (in chunks, so that the budget is checked and the curve reported)
        if stopped == "completed" and it < total:
            lbfgs = torch.optim.LBFGS(
                params,
                lr=1.0,
                max_iter=1,
                history_size=50,
                line_search_fn="strong_wolfe",
                tolerance_grad=1e-14,
                tolerance_change=1e-16,
            )
            evals = [0]

            def closure() -> Any:
                lbfgs.zero_grad(set_to_none=True)
                loss = loss_fn()
                loss.backward()
                evals[0] += 1
                return loss

            chunk = self.report_every or (total - it)
            while it < total:
                why = out_of_budget()
                if why is not None:
                    stopped = why
                    break
                todo = min(chunk, total - it)
                if max_w is not None:  # an iteration makes >= 1 evaluation (more with the line search)
                    todo = max(1, min(todo, int((max_w - work) // n)))
                lbfgs.param_groups[0]["max_iter"] = todo
                lbfgs.param_groups[0]["max_eval"] = int(todo * 1.25) + 1
                state = lbfgs.state[params[0]]
                before = state.get("n_iter", 0)
                e0 = evals[0]
                lbfgs.step(closure)
                done = state.get("n_iter", 0) - before
                it += done
                work += n * (evals[0] - e0)
                lv = float(loss_fn().detach())
                if not math.isfinite(lv):
                    stopped = "non-finite loss"
                    break
                last_loss = lv
                self.losses.append(lv)
                if self.keep_best and lv < best_loss:
                    best_loss = lv
                    best = [q.detach().clone() for q in params]
                if self.report_every:
                    anytime()
                if done < todo and evals[0] - e0 < lbfgs.param_groups[0]["max_eval"]:
                    # converged (gradient or change below tolerance), not out of evaluations
                    stopped = "lbfgs converged"
                    break

        if stopped == "completed" and it < self.steps + self.lbfgs_steps:
            stopped = "max_iterations"  # the plan was cut to budget.max_iterations
        if self.keep_best and best is not None:
            final = float(loss_fn().detach()) if stopped != "non-finite loss" else math.inf
            if not final <= best_loss:  # the last step made things worse: back to the best iterate
                with torch.no_grad():
                    for q, b in zip(params, best):
                        q.copy_(b)
                last_loss = best_loss
            else:
                last_loss = final
        elif stopped == "non-finite loss":
            with torch.no_grad():
                for q, b in zip(params, snapshot):
                    q.copy_(b)
        y = predict()
        meta = {
            "fit_seconds": time.perf_counter() - start,
            "iterations": it,
            "work": work,
            "loss": last_loss,
            "stopped": stopped,
        }
        return {"y": y, "meta": meta}


register_solver(
    "pinn",
    PINN,
    tasks=[TASK_ID],
    role="baseline",
    description="physics-informed MLP (3 x 50 tanh, t scaled to [-1, 1]), ODE residual + 100 x IC loss, Adam 1e-3",
    defaults={
        "width": 50,
        "depth": 3,
        "steps": 5000,
        "lr": 1e-3,
        "lbfgs_steps": 0,
        "ic_weight": 100.0,
        "report_every": 500,
        "stop_fraction": 0.9,
        "keep_best": True,
    },
    requires=("torch",),
)
