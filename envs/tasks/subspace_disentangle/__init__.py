"""``SubspaceDisentangle-v0``: recovering content and style subspaces and transferring style under weak supervision,
the setting of *Can Diffusion Models Disentangle? A Theoretical Perspective* (Wang, Mirza, Gong, Gong, Zhang, Tracey,
Placek, Vilela & Glass, NeurIPS 2025, arXiv:2504.00220).

This package: :mod:`.task`, :mod:`.report`. The task's public names are re-exported here."""

from papergym.envs.tasks.subspace_disentangle.task import (
    FAMILIES,
    GAMMA,
    N_QUERIES,
    SUPERVISIONS,
    TINTS,
    DigitsTruth,
    LSGMMTruth,
    SubspaceEvaluator,
    SubspaceProblem,
    SubspaceTask,
    gmm_logpdf,
    gmm_score,
    make_lsgmm,
    subspace_error,
)

__all__ = [
    "DigitsTruth",
    "FAMILIES",
    "GAMMA",
    "LSGMMTruth",
    "N_QUERIES",
    "SUPERVISIONS",
    "SubspaceEvaluator",
    "SubspaceProblem",
    "SubspaceTask",
    "TINTS",
    "gmm_logpdf",
    "gmm_score",
    "make_lsgmm",
    "subspace_error",
]
