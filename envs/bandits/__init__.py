"""Bandit environments: NonStatLipschitz-v0 (``lipschitz/``), NoiseFreeGPBandit-v0 (``gp/``), MSetSemiBandit-v0
(``semibandit/``)."""
