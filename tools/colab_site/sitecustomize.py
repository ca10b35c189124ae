"""No network for this Python process (the Colab stand-in of tools/colab.py).

On ``PYTHONPATH`` of the kernel that runs a chapter, and so of everything it
starts (pip, subprocesses): a connection to anything but this machine
(loopback, Unix sockets) or a name lookup of another host raises ``OSError``
and is written to the file ``RHN_OFFLINE_LOG`` names, so that a chapter that
catches the error still fails the test.
"""

import os
import socket

_LOCAL = ("localhost", "127.0.0.1", "::1", "", None)


def _is_local(host: object) -> bool:
    return host in _LOCAL or str(host).startswith("127.")


def _refuse(what: str) -> None:
    log = os.environ.get("RHN_OFFLINE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}: {what}\n")
    raise OSError(f"no network in the Colab stand-in (tools/colab.py): {what}")


_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_getaddrinfo = socket.getaddrinfo


def _checked(sock: socket.socket, address: object) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0] if isinstance(address, tuple) else address
        if not _is_local(host):
            _refuse(f"connect to {address!r}")


def connect(self: socket.socket, address: object) -> None:
    _checked(self, address)
    return _connect(self, address)


def connect_ex(self: socket.socket, address: object) -> int:
    _checked(self, address)
    return _connect_ex(self, address)


def getaddrinfo(host: object, *args: object, **kwargs: object) -> list:
    if not _is_local(host):
        _refuse(f"look up {host!r}")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
socket.getaddrinfo = getaddrinfo
