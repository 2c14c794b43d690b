"""systemd's readiness protocol (sd_notify(3)), for a unit of ``Type=notify``
(docs/wildtable.service): ``READY=1`` once the server accepts play, ``STOPPING=1`` as it
drains, ``STATUS=...`` with what it does. A datagram to the socket named by $NOTIFY_SOCKET;
nothing at all where that is unset (not under systemd)."""

from __future__ import annotations

import os
import socket


def notify(*fields: str) -> bool:
    """Send ``fields`` (``"READY=1"``, ...) to systemd; True if there was a socket to send to.
    Never raises: readiness is a courtesy to the service manager, not a reason to stop."""
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return False
    if path.startswith("@"):
        path = "\0" + path[1:]          # an abstract socket
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.sendto("\n".join(fields).encode(), path)
    except OSError:
        return False
    return True
