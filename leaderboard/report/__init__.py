"""Figures and (in a later issue) the static HTML leaderboard."""
