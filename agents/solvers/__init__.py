"""Solvers of the papers' solver-benchmark tasks (importing this package registers them)."""

from papergym.agents.solvers import (  # noqa: F401  (registers them)
    adasdbo,
    agf,
    bcd,
    dana,
    dbgd,
    diffusion_disentangle,
    flood,
    lear,
    lip_resnet,
    local_sgd,
    nystrom_lssvm,
    radagrad,
    symmpo,
    ufo_rl,
)
