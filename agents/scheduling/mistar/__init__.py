"""MIStar (Wang et al., NeurIPS 2025): memory-enhanced improvement heuristics for the flexible job shop.

:mod:`.model` (MHGNN encoder and pair decoder), :mod:`.memory` (association matrices, retrieval, votes,
revisit penalty), :mod:`.agent` (parallel greedy search, the ``mistar`` agent), :mod:`.train` (n-step PPO).
Needs the ``torch`` extra (torch and torch-geometric).
"""
