"""Sandboxed execution of submitted agents and solvers: the leaderboard's trust boundary.

Submitted code is hostile until proven otherwise. The trusted evaluator owns the env / task, the
oracle, the hidden seeds and the store; it starts **one child process per submission** (all test
seeds together) and talks to it over a length-prefixed message channel
(:mod:`papergym.leaderboard.board.channel`) on a dedicated socket (not stdin / stdout). The child runs
:mod:`papergym.leaderboard.board._sandbox_child`, which imports the submitted file and hosts the agent(s) or
the solver. One step round trip carries every seed's feedback and returns every seed's action.

Isolation
---------
``sandbox=`` names one of four modes; the mode actually used is :attr:`SessionReport.sandbox` (and the
store's ``sandbox`` column). :func:`resolve_sandbox` decides it from
:func:`papergym.leaderboard.board.isolation.isolation_status`, which probes each piece once per process:

* ``"full"`` -- what ranked evaluation uses: bubblewrap + a per-job cgroup (memory, pids, cpu) + a
  seccomp filter + a per-job uid. If any piece is unavailable it raises :class:`SandboxUnavailable`
  (status ``error``) naming every missing piece, before anything runs; it never falls back.
* ``"bwrap"`` -- local, unranked use: bubblewrap and the rlimits, plus each of the cgroup, the
  seccomp filter and the per-job uid that works here (as root without a uid pool: uid 65534, shared by
  such sandboxes). :class:`SandboxUnavailable` when bubblewrap does not work.
* ``"auto"``: ``"full"`` when every piece works, else ``"bwrap"`` (with a :class:`SandboxWarning`
  naming what is missing), else :class:`SandboxUnavailable`, which names what is missing and says that
  ``papergym submit --unsafe-no-sandbox`` exists for local experiments. Never silently unisolated.
* ``"unsafe-rlimits"``, only when asked for by that exact name (the CLI's ``--unsafe-no-sandbox``), with
  a loud :class:`SandboxWarning`: the rlimits below, a scrubbed environment, a temporary work dir, a
  new session (its process group is killed on timeout), ``PR_SET_PDEATHSIG``, a meta-path blocker for
  ``papergym`` (best effort), the job cgroup and the per-job uid where available (else uid 65534 if
  the Python installation is reachable by other users; the warning says when the process runs as
  root). No filesystem, network or system-call isolation: it can read every file its uid can read,
  ``/proc/<pid>/environ`` of processes of its uid included. The former name ``"rlimits"`` raises
  :class:`ValueError` naming the new one.

What ``"full"`` enforces, and how:

* bubblewrap (:func:`bwrap_available` runs the real command line with a trivial script) with new pid,
  network, ipc, uts and cgroup namespaces: no network at all (``connect`` fails), no process of the
  machine visible, ``--die-with-parent``, ``--new-session``;
* a filesystem made of read-only binds of only what the runtime needs: ``/usr`` (and the ``/lib*``,
  ``/bin`` links), ``/etc/ld.so.cache``, the Python installation (``sys.base_prefix``,
  ``sys.prefix``, the site-packages folders); ``/proc`` (of the sandbox's pid namespace), a minimal
  ``/dev``, a tmpfs of ``Limits.file_size_mb`` on ``/tmp`` (the work dir) and on ``/dev/shm``.
  papergym is masked: every ``papergym*`` folder in site-packages is covered by an empty tmpfs and
  every ``.pth`` / editable finder that mentions it by ``/dev/null`` (the editable install points at
  the repository, which is not mounted either). The store, the evaluator's secret, ``$HOME`` and the
  repository are not visible. The child script, the channel module and the submitted file are copied
  in read-only (``/sandbox/lib/...``, ``/sandbox/submission/<name>.py``) from memory, so no host path
  leaks;
* ``--clearenv`` with a minimal environment (``HOME=/tmp``, ``PATH``, ``OMP``/``OPENBLAS``/``MKL``/
  ``NUMEXPR``/``NUMBA_NUM_THREADS=1``, ``NUMBA_CACHE_DIR=/tmp/numba``, ``PYTHONHASHSEED=0``,
  ``MPLBACKEND=Agg``), for bubblewrap itself too (the sandbox's pid 1). Python runs with ``-s -P``
  rather than ``-I``: the environment is already cleared, and ``-I`` would drop ``PYTHONHASHSEED``;
* a uid of its own (:func:`papergym.leaderboard.board.isolation.acquire_uid`: a pool of uids no account
  uses, one ``flock``-ed lock file per uid, so concurrent sandboxes of every process on the machine
  get different uids; released when the sandbox ends). The kernel ignores ``RLIMIT_NPROC`` for uid 0,
  also for a uid mapped to 0 in a user namespace, so as root bwrap runs *without* a user namespace
  and the child drops to the job's uid/gid (``setgroups([])``, ``setresgid``, ``setresuid``, which
  also clears every capability) as its very first action, before the submitted file is read. One
  submission's processes therefore never count against another's ``RLIMIT_NPROC``, and it cannot
  signal or read the other's processes. (As a normal user bwrap uses an unprivileged user namespace;
  there is no uid pool then, so ``"full"`` needs root.);
* a job cgroup (:class:`papergym.leaderboard.board.isolation.JobCgroup`, cgroup v2 or v1), joined by the
  launched process between ``fork`` and the ``exec`` of bwrap, so every process and thread of the
  sandbox is in it: memory ``Limits.memory_mb`` with swap 0 -- anonymous memory, page cache and the
  tmpfs / ``memfd`` pages that ``RLIMIT_AS`` does not count; tasks ``Limits.processes`` + 2 (bwrap's
  own two processes); CPU bandwidth ``Limits.cpus``. When the cgroup's OOM killer ends a task (its
  ``oom_kill`` counter), the session ends with status ``oom``. Killing the sandbox SIGKILLs every task
  of the cgroup until it is empty (``cgroup.kill`` on v2), so nothing is left behind, and the cgroup
  folders are removed;
* a seccomp filter (:func:`papergym.leaderboard.board.isolation.seccomp_bpf`, given to bubblewrap as
  ``--seccomp FD``, installed just before the exec of the child): ``EPERM`` for ``ptrace``,
  ``process_vm_readv``/``writev``, mounts, ``unshare``/``setns`` and ``clone`` with a ``CLONE_NEW*`` flag,
  keyrings, ``bpf``, ``perf_event_open``, ``userfaultfd``, io_uring, module / kexec loading, ``reboot``,
  swap, ``open_by_handle_at`` and more (:data:`~papergym.leaderboard.board.isolation.DENIED_SYSCALLS`);
  ``ENOSYS`` for ``clone3`` (glibc then uses ``clone``, whose flags the filter sees), so threads
  (numpy, torch, Python's) and ``fork`` work; another system-call ABI kills the process;
* rlimits, set before the exec of bwrap / python: ``RLIMIT_CPU`` (soft ``cpu_seconds``: SIGXCPU;
  hard 5 s later: SIGKILL), ``RLIMIT_AS`` (``memory_mb``: a large ``malloc`` fails with
  ``MemoryError``, status ``oom``), ``RLIMIT_FSIZE``, ``RLIMIT_NOFILE``, ``RLIMIT_NPROC`` (of the
  job's uid), ``RLIMIT_CORE=0``.

Time limits (:class:`Limits`): per call (one round trip: a step, a start, an import), per episode (an
agent session's start..close, or one solve; a solve's own ``timeout`` too), per submission (the whole
life of the session object, every solve included) and CPU seconds. On any timeout the whole sandbox
is killed (SIGKILL to bwrap, whose pid namespace dies with it; the process group in rlimits mode) and
:class:`SandboxError` with status ``timeout`` is raised. Later calls on a dead agent session raise
the same error again; a solver session starts a fresh child for its next solve.

Statuses: ``error`` (an exception in the submitted code, a protocol violation, a crash, a bad import),
``timeout`` (a time limit, the CPU limit, ``BudgetExceeded`` raised by a solver), ``oom``
(``MemoryError`` inside, or killed by SIGKILL without reaching the CPU limit -- the kernel's OOM
killer), ``invalid_action`` (decided by the evaluator). Every :class:`SandboxError` carries the tail
of the child's stderr (stdout is redirected into it) for the author.

Speed
-----
One step is one round trip over two pipes. What keeps it cheap:

* the hot messages use the channel's JSON-free fast path, and both ends cache the frame layout (the
  header bytes of a given op, dtypes and shapes), so a step's codec is a few microseconds;
* both ends busy-wait for the other's next frame for up to :data:`~papergym.leaderboard.board.process.SPIN_SECONDS`
  before sleeping -- a wake-up through the hypervisor costs ~45 us per round trip on the 2-vCPU VM here, a spinning
  round trip ~2 us;
* :func:`papergym.leaderboard.board.evaluate.play` splits a step into :meth:`SandboxedAgentSession.send_step`
  and :meth:`~SandboxedAgentSession.recv_step` and books the previous round's regret in between,
  while the agent computes;
* the parent's reads block (no timer syscalls): a watchdog thread enforces the deadlines.

Measured (``python benchmarks/bench_sandbox.py``, T = 10^5, UCB1 on 32 arms, 20 seeds, bwrap, 2-vCPU
VM): sandboxed / in-process = 1.45 (about 14 us added per step); without the spin it was 4-6.

Sessions
--------
:class:`SandboxedAgentSession` / :class:`InProcessAgentSession` (trusted reference agents) share the
hosting code (:class:`papergym.leaderboard.board._sandbox_child.AgentHost`) and give bit-identical actions;
likewise :class:`SandboxedSolverSession` / :class:`InProcessSolverSession`.

Modules
-------
This module is the entry point: it re-exports the public names of the modules that implement the sandbox,

* :mod:`papergym.leaderboard.board.limits` -- :class:`Limits`, the modes (:func:`resolve_sandbox`), the
  errors and :class:`SessionReport`;
* :mod:`papergym.leaderboard.board.entry` -- ``"file.py:attr"`` entries (:func:`load_entry`,
  :func:`check_entry_statically`);
* :mod:`papergym.leaderboard.board.public` -- the public problem (:func:`problem_to_public`,
  :func:`space_to_public`);
* :mod:`papergym.leaderboard.board.bwrap` -- the bubblewrap command line, the rlimits, :func:`bwrap_available`;
* :mod:`papergym.leaderboard.board.protocol` -- the checks of every message from the child;
* :mod:`papergym.leaderboard.board.process` -- the child process, its deadlines and spin gate;
* :mod:`papergym.leaderboard.board.sessions` -- the agent and solver sessions.
"""

from __future__ import annotations

from papergym.leaderboard.board.bwrap import bwrap_available
from papergym.leaderboard.board.entry import (
    check_entry_statically,
    load_entry,
    top_level_names,
)
from papergym.leaderboard.board.limits import (
    SANDBOX_MODES,
    Limits,
    ProtocolError,
    SandboxError,
    SandboxUnavailable,
    SandboxWarning,
    SessionReport,
    resolve_sandbox,
)
from papergym.leaderboard.board.public import problem_to_public, space_to_public
from papergym.leaderboard.board.sessions import (
    AgentSession,
    InProcessAgentSession,
    InProcessSolverSession,
    SandboxedAgentSession,
    SandboxedSolverSession,
    SolverSession,
)

__all__ = [
    "SANDBOX_MODES",
    "AgentSession",
    "InProcessAgentSession",
    "InProcessSolverSession",
    "Limits",
    "ProtocolError",
    "SandboxError",
    "SandboxUnavailable",
    "SandboxWarning",
    "SandboxedAgentSession",
    "SandboxedSolverSession",
    "SessionReport",
    "SolverSession",
    "bwrap_available",
    "check_entry_statically",
    "load_entry",
    "problem_to_public",
    "resolve_sandbox",
    "space_to_public",
    "top_level_names",
]
