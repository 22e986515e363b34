"""Shipped calibration of ``mdbe-calibrated`` (see :class:`papergym.agents.bandits.mdbe.BatchedMDBECalibrated`).

Written by ``benchmarks/calibrate_mdbe.py``; do not edit by hand. ``ENTRIES``: one
:func:`~papergym.agents.bandits.mdbe.calibrate_c0` record per class and horizon (``sigma`` None for Bernoulli
rewards), all made with ``SETTINGS``; ``tried`` lists every c0 run with the number of runs (of ``runs``) that
restarted and the rounds played (fewer than ``T`` for a c0 stopped once it exceeded the target).
"""

#: the settings every entry was made with (mdbe-calibrated's defaults)
SETTINGS: dict = {'c0_grid': [0.12, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.8, 1.0], 'false_alarm_target': 0.05, 'calibration_runs': 60, 'mdbe': {'log_term': 'T', 'min_depth': 2, 'growth': None, 'start_grid': 'dyadic', 'code_compat': False, 'replay_schedule': 'absolute-round'}}

#: one calibrate_c0 record per (d, T, noise, sigma)
ENTRIES: list = [
    {'d': 1, 'T': 256, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.15, 'false_alarm_rate': 0.03333333333333333, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 28, 'rounds': 256}, {'c0': 0.15, 'alarm_runs': 2, 'rounds': 256}]},
    {'d': 1, 'T': 512, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.15, 'false_alarm_rate': 0.05, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 17, 'rounds': 256}, {'c0': 0.15, 'alarm_runs': 3, 'rounds': 512}]},
    {'d': 1, 'T': 1024, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.12, 'false_alarm_rate': 0.05, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 3, 'rounds': 1024}]},
    {'d': 1, 'T': 2048, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.25, 'false_alarm_rate': 0.03333333333333333, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 26, 'rounds': 1280}, {'c0': 0.15, 'alarm_runs': 15, 'rounds': 1280}, {'c0': 0.2, 'alarm_runs': 5, 'rounds': 1280}, {'c0': 0.25, 'alarm_runs': 2, 'rounds': 2048}]},
    {'d': 1, 'T': 4096, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.3, 'false_alarm_rate': 0.0, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 18, 'rounds': 1280}, {'c0': 0.15, 'alarm_runs': 11, 'rounds': 1280}, {'c0': 0.2, 'alarm_runs': 4, 'rounds': 1280}, {'c0': 0.25, 'alarm_runs': 4, 'rounds': 3840}, {'c0': 0.3, 'alarm_runs': 0, 'rounds': 4096}]},
    {'d': 1, 'T': 8192, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.25, 'false_alarm_rate': 0.016666666666666666, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 19, 'rounds': 1280}, {'c0': 0.15, 'alarm_runs': 11, 'rounds': 1280}, {'c0': 0.2, 'alarm_runs': 5, 'rounds': 1280}, {'c0': 0.25, 'alarm_runs': 1, 'rounds': 8192}]},
    {'d': 1, 'T': 16384, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.3, 'false_alarm_rate': 0.0, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 13, 'rounds': 1280}, {'c0': 0.15, 'alarm_runs': 7, 'rounds': 1792}, {'c0': 0.2, 'alarm_runs': 4, 'rounds': 3072}, {'c0': 0.25, 'alarm_runs': 4, 'rounds': 13568}, {'c0': 0.3, 'alarm_runs': 0, 'rounds': 16384}]},
    {'d': 1, 'T': 32768, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.35, 'false_alarm_rate': 0.0, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 11, 'rounds': 1280}, {'c0': 0.15, 'alarm_runs': 4, 'rounds': 1536}, {'c0': 0.2, 'alarm_runs': 4, 'rounds': 3840}, {'c0': 0.25, 'alarm_runs': 4, 'rounds': 13568}, {'c0': 0.3, 'alarm_runs': 4, 'rounds': 29696}, {'c0': 0.35, 'alarm_runs': 0, 'rounds': 32768}]},
    {'d': 1, 'T': 65536, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.3, 'false_alarm_rate': 0.016666666666666666, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 11, 'rounds': 1280}, {'c0': 0.15, 'alarm_runs': 4, 'rounds': 1280}, {'c0': 0.2, 'alarm_runs': 5, 'rounds': 8704}, {'c0': 0.25, 'alarm_runs': 4, 'rounds': 17152}, {'c0': 0.3, 'alarm_runs': 1, 'rounds': 65536}]},
    {'d': 1, 'T': 131072, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.3, 'false_alarm_rate': 0.0, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 5, 'rounds': 1536}, {'c0': 0.15, 'alarm_runs': 5, 'rounds': 1280}, {'c0': 0.2, 'alarm_runs': 4, 'rounds': 9472}, {'c0': 0.25, 'alarm_runs': 4, 'rounds': 25344}, {'c0': 0.3, 'alarm_runs': 0, 'rounds': 131072}]},
    {'d': 1, 'T': 262144, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.3, 'false_alarm_rate': 0.016666666666666666, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 8, 'rounds': 1792}, {'c0': 0.15, 'alarm_runs': 5, 'rounds': 3072}, {'c0': 0.2, 'alarm_runs': 4, 'rounds': 12544}, {'c0': 0.25, 'alarm_runs': 4, 'rounds': 29696}, {'c0': 0.3, 'alarm_runs': 1, 'rounds': 262144}]},
    {'d': 1, 'T': 100000, 'noise': 'bernoulli', 'sigma': None, 'c0': 0.3, 'false_alarm_rate': 0.0, 'runs': 60, 'target': 0.05, 'tried': [{'c0': 0.12, 'alarm_runs': 4, 'rounds': 1536}, {'c0': 0.15, 'alarm_runs': 4, 'rounds': 1536}, {'c0': 0.2, 'alarm_runs': 5, 'rounds': 11008}, {'c0': 0.25, 'alarm_runs': 4, 'rounds': 29440}, {'c0': 0.3, 'alarm_runs': 0, 'rounds': 100000}]},
]
