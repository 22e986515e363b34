"""papergym sweep: horizon parsing, the log-log slope fit on synthetic power laws (known exponents), and the
command end to end on a tiny grid."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from papergym.leaderboard.cli import main
from papergym.leaderboard.runner.sweep import (
    bootstrap_slopes,
    fit_power_law,
    parse_horizons,
    parse_shifts,
    theory_slopes,
)

ENV = "NonStatLipschitz-v0"


def _exit_code(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def test_parse_horizons_and_shifts():
    assert parse_horizons("2^8..2^10") == [256, 512, 1024]
    assert parse_horizons("2^12") == [4096]
    assert parse_horizons("2^10, 2^12,5000,1024") == [1024, 4096, 5000]
    assert parse_horizons("2^8..2^9,2^12..2^13") == [256, 512, 4096, 8192]
    assert parse_shifts("0,1,2,4,8,16") == [0, 1, 2, 4, 8, 16]
    assert parse_shifts("4, 2,2") == [2, 4]
    for bad in ["", "2^a..2^4", "2^10..2^8", "12..14", "2^10;2^12", "2^10,,2^12", "2**10", "2^0", "1e4", "-8"]:
        with pytest.raises(ValueError, match="--horizon"):
            parse_horizons(bad)
    for bad in ["", "1,-2", "a", "1.5"]:
        with pytest.raises(ValueError, match="--shifts"):
            parse_shifts(bad)


def test_theory_slopes():
    assert theory_slopes(1) == (2 / 3, 1 / 3)
    assert theory_slopes(2) == (3 / 4, 1 / 4)


def test_fit_recovers_known_exponents_exactly_without_noise():
    T = np.array([2**k for k in range(8, 15) for _ in range(4)], dtype=float)
    L = np.array([l for _ in range(8, 15) for l in (0, 1, 3, 7)], dtype=float)
    R = 3.5 * T**0.61 * (L + 1) ** 0.27
    fit = fit_power_law(T, L, R)
    assert fit["slope_T"] == pytest.approx(0.61, abs=1e-10)
    assert fit["slope_L"] == pytest.approx(0.27, abs=1e-10)
    assert fit["intercept"] == pytest.approx(np.log(3.5), abs=1e-9)
    one_L = fit_power_law(T[L == 0], L[L == 0], R[L == 0])
    assert one_L["slope_T"] == pytest.approx(0.61, abs=1e-10) and np.isnan(one_L["slope_L"])
    with pytest.raises(ValueError, match="positive"):
        fit_power_law(T, L, np.where(L == 0, 0.0, R))


def test_bootstrap_slopes_cover_the_truth_on_noisy_power_law():
    rng = np.random.default_rng(8161)
    Ts, Ls, n = [2**k for k in range(10, 17)], [0, 1, 2, 4, 8], 30
    cells = [(T, L) for T in Ts for L in Ls]
    cT = np.array([c[0] for c in cells], float)
    cL = np.array([c[1] for c in cells], float)
    seed_effect = rng.lognormal(0.0, 0.2, n)  # a run's difficulty is shared by all cells (paired seeds)
    R = (
        2.0
        * cT[:, None] ** (2 / 3)
        * (cL[:, None] + 1) ** (1 / 3)
        * seed_effect[None, :]
        * rng.lognormal(0, 0.1, (len(cells), n))
    )
    R[3, 5] = np.nan  # a failed run is left out of its cell
    out = bootstrap_slopes(cT, cL, R, n_boot=500)
    for key, truth in (("slope_T", 2 / 3), ("slope_L", 1 / 3)):
        est, lo, hi = out[key]
        assert lo <= truth <= hi and lo < est < hi and hi - lo < 0.05, (key, out[key])


def test_sweep_command_end_to_end(tmp_path, capsys):
    out = tmp_path / "sweep"
    rc = _exit_code(
        [
            "sweep",
            ENV,
            "--horizon",
            "2^8..2^10",
            "--shifts",
            "0,2",
            "--seeds",
            "2",
            "--agents",
            "mdbe,binning-ucb",
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "cells"),
            "--backend",
            "serial",
            "--quiet",
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "slope in T" in text and "slope in L+1" in text and "theory 0.667" in text and "theory 0.333" in text
    cells = pd.read_csv(out / "sweep.csv")
    assert len(cells) == 2 * 3 * 2 and set(cells.horizon) == {256, 512, 1024} and set(cells.shifts) == {0, 2}
    assert (cells.n_ok == 2).all() and (cells.mean_regret > 0).all()
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 2 * 3 * 2 * 2 and set(runs.phases) == {1, 3}
    assert (runs[runs.shifts == 0].L_tilde == 0).all()
    slopes = pd.read_csv(out / "slopes.csv")
    assert list(slopes.agent) == ["mdbe", "binning-ucb"] and np.isfinite(slopes.slope_T).all()
    assert (slopes.slope_T_lo <= slopes.slope_T).all() and (slopes.slope_T <= slopes.slope_T_hi).all()
    # the slopes printed are a fit of the cell means written
    m = cells[cells.agent == "mdbe"]
    fit = fit_power_law(m.horizon.to_numpy(), m.shifts.to_numpy(), m.mean_regret.to_numpy())
    assert slopes.slope_T[0] == pytest.approx(fit["slope_T"], rel=1e-9)
    assert (out / "sweep.png").stat().st_size > 1000 and (out / "table.txt").exists()


@pytest.mark.parametrize(
    "argv,expect",
    [
        (["--horizon", "2^8..2^a"], ["--horizon", "2^a"]),
        (["--horizon", "2^10..2^8"], ["--horizon", "empty range"]),
        (["--horizon", "2^8", "--shifts", "1,x"], ["--shifts"]),
        (["--horizon", "2^2", "--shifts", "0,8"], ["too short", "8 shifts"]),
        (["--horizon", "2^8", "--agents", "mdbe,nope"], ["--agents", "nope"]),
        (["--horizon", "2^8", "--instance", "two-peak-cyclic"], ["set by the sweep"]),
    ],
)
def test_sweep_bad_values_exit_2(argv, expect, tmp_path, capsys):
    out = tmp_path / "o"
    rc = _exit_code(["sweep", ENV, *argv, "--out", str(out), "--cache-dir", str(tmp_path / "c"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2
    for e in expect:
        assert e in err, (e, err)
    assert not out.exists()


def test_sweep_other_env_refused(tmp_path, capsys):
    assert _exit_code(["sweep", "NoiseFreeGPBandit-v0", "--horizon", "2^8", "--out", str(tmp_path / "o")]) == 2
    assert "sweep runs NonStatLipschitz-v0" in capsys.readouterr().err
