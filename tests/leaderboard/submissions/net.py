"""Tries the network: 127.0.0.1:<port> (a server the test listens on) and a public IP."""

import socket


class Agent:
    def __init__(self, problem, *, seeds, port=0):
        self.port = port

    def act(self, obs):
        out = []
        for host, port in (("127.0.0.1", self.port), ("1.1.1.1", 80)):
            s = socket.socket()
            s.settimeout(3)
            try:
                s.connect((host, port))
                out.append(f"{host}: CONNECTED")
            except OSError as exc:
                out.append(f"{host}: {type(exc).__name__} {exc}")
            finally:
                s.close()
        raise ConnectionError("; ".join(out))

    def update(self, actions, rewards, obs):
        pass
