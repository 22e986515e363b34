"""The HTTP client of a shared board (``papergym login``, ``papergym submit --server``).

A board's service (:mod:`papergym.leaderboard.board.service`) takes submissions from authors who hold an
API token (``papergym admin token create AUTHOR`` on the board's side prints one). The client sends the
token as ``Authorization: Bearer <token>``; it comes from ``$PAPERGYM_TOKEN`` or from the credentials
file that ``papergym login`` writes: ``<user config dir>/papergym/credentials.json`` (mode 0600), one
token per server URL::

    {"servers": {"https://board.example.org": "pgt_..."}}

Every error the server answers is raised as :class:`BoardClientError` with its status and the server's
``detail`` message; text from the server is passed through
:func:`papergym.leaderboard.board.terminal.clean_terminal` before it is printed.
"""

from __future__ import annotations

import ipaddress
import json
import os
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit, urlunsplit

from papergym.leaderboard.board.terminal import clean_terminal

__all__ = [
    "TOKEN_ENV",
    "BoardClient",
    "BoardClientError",
    "credentials_path",
    "format_feedback",
    "load_token",
    "normalize_server",
    "save_token",
]

#: Environment variable holding the API token (it takes precedence over the credentials file).
TOKEN_ENV = "PAPERGYM_TOKEN"
#: Statuses of a submission that is not finished yet.
PENDING_STATUSES: tuple[str, ...] = ("queued", "running")


class BoardClientError(RuntimeError):
    """A request the board refused (``status``: the HTTP status) or could not be made (``status`` None)."""

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def normalize_server(url: str) -> str:
    """``url`` as the key of a server: ``http(s)://host[:port][/path]``, scheme and host lower-case, no
    trailing ``/``, query or fragment. ``ValueError`` naming what is wrong otherwise."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("the server URL is empty; expected e.g. https://board.example.org")
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError(f"the server URL {url!r} must start with https:// (or http://)")
    if not parts.hostname:
        raise ValueError(f"the server URL {url!r} names no host")
    if parts.username or parts.password:
        raise ValueError("the server URL must not carry a user name or password; the token authenticates")
    if parts.query or parts.fragment:
        raise ValueError(f"the server URL {url!r} must not have a query or a fragment")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"the server URL {url!r} has a bad port") from None
    host = parts.hostname.lower()
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    netloc = host + (f":{port}" if port is not None else "")
    return urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), "", ""))


def is_local(url: str) -> bool:
    """Whether ``url``'s host is this machine (loopback), where plain http exposes the token to no one."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def credentials_path() -> Path:
    """The credentials file of ``papergym login`` (module docstring)."""
    from platformdirs import user_config_dir

    return Path(user_config_dir("papergym")) / "credentials.json"


def _read_credentials(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"servers": {}}
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"credentials file {path}: not valid JSON ({exc}); delete it and log in again") from None
    if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
        shape = '{"servers": {URL: token}}'
        raise ValueError(f"credentials file {path}: expected {shape}; delete it and log in again")
    return data


def save_token(server: str, token: str, path: Path | None = None) -> Path:
    """Store ``token`` for ``server`` in the credentials file (created with mode 0600, replaced
    atomically; other servers' tokens are kept). Returns the file's path."""
    path = path or credentials_path()
    key = normalize_server(server)
    data = _read_credentials(path)
    data["servers"][key] = token
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IRUSR | stat.S_IWUSR)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def load_token(server: str, path: Path | None = None) -> str | None:
    """The token for ``server``: ``$PAPERGYM_TOKEN``, else the credentials file's, else ``None``."""
    env = os.environ.get(TOKEN_ENV, "").strip()
    if env:
        return env
    path = path or credentials_path()
    token = _read_credentials(path)["servers"].get(normalize_server(server))
    return token if isinstance(token, str) and token else None


class BoardClient:
    """Requests to one board's service.

    Parameters
    ----------
    server
        The service's base URL (``https://board.example.org``).
    token
        The author's API token (needed to submit and to read one's submissions; the boards are public).
    timeout
        Seconds per request.
    """

    def __init__(self, server: str, token: str | None = None, *, timeout: float = 60.0):
        import httpx

        self.server = normalize_server(server)
        self.token = token
        headers = {"User-Agent": "papergym-client"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(base_url=self.server, headers=headers, timeout=timeout, follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx

        try:
            resp = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise BoardClientError(f"cannot reach the board at {self.server}: {type(exc).__name__}: {exc}") from None
        if resp.status_code >= 400:
            try:
                detail = resp.json().get("detail", resp.text)
            except (ValueError, AttributeError):
                detail = resp.text
            retry = resp.headers.get("retry-after")
            raise BoardClientError(
                clean_terminal(f"the board answered {resp.status_code}: {detail}")[:2000],
                status=resp.status_code,
                retry_after=float(retry) if retry and retry.isdigit() else None,
            )
        return resp

    def whoami(self) -> str:
        """The author the token belongs to."""
        return str(self._request("GET", "/api/v1/whoami").json()["author"])

    def submit(
        self,
        file: str | os.PathLike,
        *,
        board: str,
        attr: str,
        name: str | None = None,
        split: str = "validation",
        hyperparameters: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Upload ``file`` to ``board``: ``{"id", "status": "queued", "url"}``."""
        path = Path(file)
        data = {
            "board": board,
            "attr": attr,
            "split": split,
            "hyperparameters": json.dumps(dict(hyperparameters or {}), allow_nan=False),
        }
        if name is not None:
            data["name"] = name
        with open(path, "rb") as fh:
            return self._request(
                "POST", "/api/v1/submissions", data=data, files={"file": (path.name, fh, "text/x-python")}
            ).json()

    def submission(self, submission_id: int) -> dict[str, Any]:
        """The status and feedback of one of one's submissions."""
        return self._request("GET", f"/api/v1/submissions/{int(submission_id)}").json()

    def wait(
        self,
        submission_id: int,
        *,
        poll_seconds: float = 2.0,
        timeout: float | None = None,
        progress: Callable[[dict[str, Any], float], None] | None = None,
    ) -> dict[str, Any]:
        """Poll the submission until it is finished; ``progress(answer, elapsed_seconds)`` after every poll.
        ``TimeoutError`` after ``timeout`` seconds."""
        t0 = time.monotonic()
        while True:
            answer = self.submission(submission_id)
            elapsed = time.monotonic() - t0
            if progress is not None:
                progress(answer, elapsed)
            if answer.get("status") not in PENDING_STATUSES:
                return answer
            if timeout is not None and elapsed > timeout:
                raise TimeoutError(f"submission {submission_id} is still {answer.get('status')} after {elapsed:.0f} s")
            time.sleep(poll_seconds)

    def boards(self) -> list[dict[str, Any]]:
        return self._request("GET", "/api/v1/boards").json()["boards"]

    def board(self, board: str) -> dict[str, Any]:
        return self._request("GET", f"/api/v1/boards/{board}").json()

    def board_csv(self, board: str) -> str:
        return self._request("GET", f"/api/v1/boards/{board}.csv").text


def _num(x: Any) -> str:
    from papergym.leaderboard.board.text import fmt_number

    return fmt_number(x) if isinstance(x, int | float) else "-"


def format_feedback(answer: Mapping[str, Any]) -> str:
    """The text ``papergym submit --server`` prints for a finished submission: status, score and CI,
    run statuses per stratum and -- on the validation split -- the message, each run's metrics and the
    stderr tail. Every string is passed through :func:`clean_terminal`."""
    fb = dict(answer.get("feedback") or {})
    c = clean_terminal
    lines = [
        c(
            f"submission {answer.get('id')} ({fb.get('name', '?')}) on {fb.get('board', '?')}, "
            f"{fb.get('split', '?')} split: {answer.get('status', fb.get('status', '?'))}"
        )
    ]
    if fb.get("score") is not None:
        lines.append(
            c(
                f"  {fb.get('metric', 'score')} = {_num(fb['score'])}  95% CI "
                f"[{_num(fb.get('ci_low'))}, {_num(fb.get('ci_high'))}]"
            )
        )
    if isinstance(fb.get("wall_seconds"), int | float):
        lines.append(f"  evaluated in {fb['wall_seconds']:.0f} s")
    by = fb.get("runs_by_status") or {}
    if by:
        lines.append("  runs:")
        for stratum, counts in by.items():
            lines.append(c(f"    {stratum}: " + ", ".join(f"{n} {st}" for st, n in counts.items())))
    if fb.get("message"):
        lines.append(c(f"  message: {fb['message']}"))
    runs = fb.get("runs") or []
    if runs:
        lines.append("  per run:")
        for r in runs:
            m = r.get("metrics") or {}
            shown = ", ".join(f"{k}={_num(v)}" for k, v in sorted(m.items()) if v is not None)
            err = f"  {' '.join(str(r['error']).split())}" if r.get("error") else ""
            lines.append(
                c(
                    f"    {r.get('stratum')}#{r.get('index')}: {r.get('status')}"
                    + (f"  {shown}" if shown else "")
                    + err
                )[:400]
            )
    tail = (fb.get("stderr_tail") or "").strip()
    if tail:
        lines.append("  stderr (tail):")
        lines += ["    " + line for line in c(tail).splitlines()[-20:]]
    return "\n".join(lines)
