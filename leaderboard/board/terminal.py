"""Text that a submission controls, made safe for a terminal.

A submission's stderr, its error messages, its name and its author's name reach the operator's and the
submitter's terminals (``papergym submit``, ``papergym leaderboard``, the service's and the worker's
logs). Raw, an escape sequence in them could retitle the window, clear the screen, rewrite earlier
lines or hide text (the "terminal escape injection" class of attacks); Unicode bidirectional overrides
could make a line read differently from what it is. :func:`clean_terminal` removes all of that.
"""

from __future__ import annotations

import re

__all__ = ["clean_terminal"]

# ESC-introduced sequences: CSI (ESC [ ... final byte), OSC / DCS / SOS / PM / APC strings (ESC ] P X ^ _
# ... terminated by BEL or ST), and the other escapes (ESC, intermediate bytes 0x20-0x2f, a final byte).
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"  # ESC 7, ESC c, ESC % G, ESC ( B ...
    # the same in 8-bit C1 form: CSI 0x9b, OSC 0x9d, DCS 0x90, SOS 0x98, PM 0x9e, APC 0x9f
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
)
# what is left: C0 controls except tab and newline, DEL, C1 controls, bidi marks, embeddings, overrides
# and isolates
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# a lone surrogate (from JSON's \\ud800 escapes or bytes decoded with surrogateescape) cannot be printed:
# writing it to a UTF-8 terminal raises UnicodeEncodeError
_SURROGATES = re.compile("[\ud800-\udfff]")


def clean_terminal(text: object) -> str:
    """``text`` (any object, as ``str``) without escape sequences, control characters other than tab and
    newline (a carriage return becomes a newline, so nothing can overwrite a line) and Unicode
    bidirectional marks and overrides; a lone surrogate becomes U+FFFD (it could not be printed)."""
    s = str(text).replace("\r\n", "\n").replace("\r", "\n")
    s = _ESCAPES.sub("", s)
    return _SURROGATES.sub("\ufffd", _CONTROLS.sub("", s))
