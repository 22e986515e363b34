"""Tries system calls a sandbox must refuse, through ctypes, and raises ``REPORT name=result ...``:
the errno name it got back, or ``ok`` when the call succeeded. Also checks that a thread and a fork
still work (``thread=ok fork=ok``)."""

import ctypes
import errno
import os
import platform
import threading

# system call numbers: x86-64 and arm64 (asm-generic)
NR = {
    "x86_64": {"keyctl": 250, "bpf": 321, "clone": 56, "clone3": 435, "perf_event_open": 298},
    "aarch64": {"keyctl": 219, "bpf": 280, "clone": 220, "clone3": 435, "perf_event_open": 241},
}
CLONE_NEWUSER, CLONE_NEWNET, SIGCHLD = 0x10000000, 0x40000000, 17
libc = ctypes.CDLL(None, use_errno=True)
UL = ctypes.c_ulong


def result(r):
    return "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def in_child(fn):
    """Run ``fn`` (returns an exit code) in a forked child; its exit code."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(fn())
        finally:
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


class Agent:
    def __init__(self, problem, *, seeds):
        nr = NR[platform.machine()]
        got = {}
        # PTRACE_TRACEME in a child that exits at once (its errno as exit code)
        code = in_child(lambda: 0 if libc.ptrace(UL(0), UL(0), UL(0), UL(0)) == 0 else ctypes.get_errno())
        got["ptrace"] = "ok" if code == 0 else errno.errorcode.get(code, str(code))
        code = in_child(lambda: 0 if libc.unshare(CLONE_NEWUSER) == 0 else ctypes.get_errno())
        got["unshare"] = "ok" if code == 0 else errno.errorcode.get(code, str(code))
        target = os.path.abspath("mnt")  # a folder of its own, in its work dir
        os.makedirs(target, exist_ok=True)
        got["mount"] = result(libc.mount(b"none", target.encode(), b"tmpfs", UL(0), None))
        got["keyctl"] = result(libc.syscall(nr["keyctl"], UL(0), ctypes.c_long(-3), UL(0)))  # GET_KEYRING_ID, session
        got["bpf"] = result(libc.syscall(nr["bpf"], UL(0), None, UL(0)))  # BPF_MAP_CREATE without attributes
        attr = ctypes.create_string_buffer(128)  # perf_event_attr {type=SOFTWARE, size=128, config=CPU_CLOCK}
        attr[0:4] = (1).to_bytes(4, "little")
        attr[4:8] = (128).to_bytes(4, "little")
        got["perf_event_open"] = result(
            libc.syscall(nr["perf_event_open"], attr, UL(0), ctypes.c_long(-1), ctypes.c_long(-1), UL(0))
        )
        # clone(CLONE_NEWUSER | SIGCHLD): fork-like; a child that exists exits at once
        r = libc.syscall(nr["clone"], UL(CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD), UL(0), UL(0), UL(0), UL(0))
        if r == 0:
            os._exit(0)
        if r > 0:
            os.waitpid(r, 0)
        got["clone_newuser"] = result(r)
        got["clone3"] = result(libc.syscall(nr["clone3"], None, UL(0)))
        box = []
        t = threading.Thread(target=box.append, args=("ok",))
        t.start()
        t.join()
        got["thread"] = box[0] if box else "failed"
        got["fork"] = "ok" if in_child(lambda: 0) == 0 else "failed"
        raise RuntimeError("REPORT " + " ".join(f"{k}={v}" for k, v in got.items()))

    def act(self, obs):
        raise AssertionError("unreachable")

    def update(self, actions, rewards, obs):
        pass
