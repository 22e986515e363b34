"""The revisions of the leaderboard store's schema, oldest first (``0001``, ``0002``, ...)."""
