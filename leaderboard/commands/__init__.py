"""The subcommands of the ``papergym`` command (:mod:`papergym.leaderboard.cli` parses the command line and
dispatches): :mod:`.compare`, :mod:`.bench`, :mod:`.sweep`, :mod:`.listing` (``list``), :mod:`.submit`,
:mod:`.board` (``leaderboard``), :mod:`.service` (``serve``, ``worker``, ``admin``, ``login``) and
:mod:`.check`; :mod:`.common` holds what they share."""
