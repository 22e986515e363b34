"""A submission that fails at import."""

raise RuntimeError("this submission is broken on purpose")
