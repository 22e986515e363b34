"""Swiss-cheese classification sub-task of ``PointCloudPH-v0`` (``docs/papers/flood.md``): diagrams →
fixed vectorisation (gudhi.representations) → a fixed scikit-learn classifier, accuracy over random splits.

The paper's classification experiments (Coral, MCB, ModelNet10, Rocks) need downloads and are out of scope;
the swiss-cheese family stands in for them: the class of a cloud is its number of voids.

* :func:`classify_set` — the labelled cloud set of one instance: classes ``k ∈ ks`` (default 4, 6, 8) voids
  with radii ``U(0.08, 0.15)``, ``per_class`` clouds of ``n`` points each, shuffled by the seed (labels are
  the evaluator's; the public problem sees the clouds only). Paper-scale (flooder's ``SwisscheeseDataset``):
  box ``[0, 5]³``, radii in ``(0.1, 0.5)``, ``k ∈ {10, 20}``, 500 clouds per class of 10⁶ points [code] — not
  the CPU default.
* :func:`features` — per cloud, for the homology dimensions ``1 … max_dim``, one of [design, kwarg
  ``features``]:

  - ``"lifetimes+betti"`` (default): the 10 largest lifetimes (zero-padded) and the Betti curve
    (``gudhi.representations.BettiCurve``) on 32 radii in ``[0, r_max]``;
  - ``"image"``: a persistence image (``gudhi.representations.PersistenceImage``, 10 × 10 pixels over
    birth × persistence ``[0, r_max]²``, Gaussian bandwidth ``r_max/20``, constant weight);
  - ``"landscape"``: the first 3 persistence landscapes (``gudhi.representations.Landscape``) on 32 radii in
    ``[0, r_max]``.

  ``r_max`` = 0.3 (radius units). Essential bars (``death = inf``; Rips below its edge threshold) are
  truncated at ``r_max``; bars are clipped to ``[0, r_max]``.
* :func:`split_accuracy` — ``StandardScaler`` + ``LogisticRegression(C=1, max_iter=1000)`` on
  ``n_splits`` stratified random splits (``StratifiedShuffleSplit``, 72 % training, ``random_state`` = the
  instance seed; flooder's protocol is 10 splits at 72 % [code]). Returns the mean test accuracy and the
  half-width of a Student-t 95 % interval over the splits. The splits share clouds, so the interval is
  optimistic about a new cloud set; it measures the split-to-split spread, which is what the paper's
  ± columns report.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from papergym.envs.tasks.persistent_homology.clouds import swiss_cheese
from papergym.validate import one_of

__all__ = ["classify_set", "features", "split_accuracy", "FEATURES", "R_MAX"]

FEATURES = ("lifetimes+betti", "image", "landscape")
R_MAX = 0.3  # [design] radius range of the vectorisations
TOP = 10  # [design] lifetimes kept per dimension
GRID = 32  # [design] radii of the Betti curve / landscapes
TRAIN_SIZE = 0.72  # flooder's split [code]


def classify_set(
    seed: int,
    n: int = 10_000,
    per_class: int = 20,
    ks: Sequence[int] = (4, 6, 8),
    r_lo: float = 0.08,
    r_hi: float = 0.15,
) -> tuple[list[np.ndarray], np.ndarray]:
    """``(clouds, labels)``: ``per_class`` swiss-cheese clouds of ``n`` points for every void count in ``ks``,
    in a seeded random order; ``labels[i]`` is the void count of ``clouds[i]``."""
    ss = np.random.SeedSequence(int(seed), spawn_key=(12, 1))
    order_rng = np.random.default_rng(ss.spawn(1)[0])
    labels = np.repeat(np.asarray(ks, dtype=np.int64), per_class)
    labels = labels[order_rng.permutation(len(labels))]
    clouds = []
    for _i, (k, child) in enumerate(zip(labels, ss.spawn(len(labels)))):
        pts, _, _ = swiss_cheese(n, int(k), r_lo, r_hi, np.random.default_rng(child))
        pts.setflags(write=False)
        clouds.append(pts)
    return clouds, labels


def _clip(D: np.ndarray) -> np.ndarray:
    D = np.asarray(D, dtype=np.float64).reshape(-1, 2)
    return np.minimum(np.maximum(D, 0.0), R_MAX)


def features(diagrams: Sequence[Sequence[np.ndarray]], max_dim: int, kind: str = "lifetimes+betti") -> np.ndarray:
    """Feature matrix ``(n_clouds, n_features)`` from per-cloud diagram lists ``[D_0, …, D_max_dim]``
    (module docstring)."""
    from gudhi.representations import BettiCurve, Landscape, PersistenceImage

    one_of(kind, "features", FEATURES)
    grid = np.linspace(0.0, R_MAX, GRID)
    blocks = []
    for k in range(1, max_dim + 1):
        dk = [_clip(dg[k]) for dg in diagrams]
        if kind == "lifetimes+betti":
            life = np.zeros((len(dk), TOP))
            for i, D in enumerate(dk):
                top = np.sort(D[:, 1] - D[:, 0])[::-1][:TOP]
                life[i, : len(top)] = top
            betti = BettiCurve(predefined_grid=grid).fit_transform(dk)
            blocks += [life, betti]
        elif kind == "image":
            pim = PersistenceImage(bandwidth=R_MAX / 20, resolution=[10, 10], im_range=[0.0, R_MAX, 0.0, R_MAX])
            blocks.append(pim.fit_transform(dk))
        else:
            land = Landscape(num_landscapes=3, resolution=GRID, sample_range=[0.0, R_MAX])
            blocks.append(land.fit_transform(dk))
    return np.hstack(blocks) if blocks else np.zeros((len(diagrams), 0))


def split_accuracy(X: np.ndarray, y: np.ndarray, n_splits: int = 10, seed: int = 0) -> dict[str, Any]:
    """Mean test accuracy over ``n_splits`` stratified 72/28 splits, the Student-t 95 % half-width, and the
    per-split accuracies (module docstring)."""
    from scipy import stats
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedShuffleSplit
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    splitter = StratifiedShuffleSplit(n_splits=n_splits, train_size=TRAIN_SIZE, random_state=int(seed))
    accs = []
    for tr, te in splitter.split(X, y):
        clf = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))
        clf.fit(X[tr], y[tr])
        accs.append(float(np.mean(clf.predict(X[te]) == y[te])))
    a = np.asarray(accs)
    half = float(stats.t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else math.nan
    return {"accuracy": float(a.mean()), "accuracy_ci95": half, "per_split": accs}
