"""Figures (:mod:`.plots`), the static HTML leaderboard (:mod:`.html`) and its terminal table (:mod:`.text`)."""
