"""A board's version follows the code that scores it, not its documentation."""

from __future__ import annotations

from papergym.leaderboard.board.configs import code_fingerprint

SRC = '''"""Module doc."""
X = 1  # a comment


class A:
    """Class doc."""

    def f(self, y=2):
        """Method doc."""
        return y + X
'''


def test_docstrings_comments_and_layout_do_not_change_the_fingerprint():
    edited = (
        SRC.replace("Module doc.", "Module doc, rewritten\nover two lines.")
        .replace("# a comment", "# another comment")
        .replace("Method doc.", "Cites docs/conventions.md.")
        .replace("    def f", "\n\n    def f")
    )
    assert edited != SRC and code_fingerprint(edited) == code_fingerprint(SRC)
    # a class whose only statement is its docstring stays valid
    assert code_fingerprint('class B:\n    """only a doc"""\n') == code_fingerprint('class B:\n    """other"""\n')


def test_code_changes_do_change_the_fingerprint():
    for changed in (
        SRC.replace("X = 1", "X = 2"),
        SRC.replace("y=2", "y=3"),
        SRC.replace("y + X", "X + y"),
        SRC.replace('"""Method doc."""', '"""Method doc."""\n        y = -y'),
    ):
        assert code_fingerprint(changed) != code_fingerprint(SRC)
    # a string that is not a docstring is code
    assert code_fingerprint('X = 1\n"not a docstring"\n') != code_fingerprint('X = 1\n"changed"\n')
