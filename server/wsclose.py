"""Close frames of the server's WebSocket layer (server/wire.py): the codes it sends, a
reason that fits a control frame, and the answer to a close that came before the 101.

Why apart: a close sent with the handshake (server/listener.py keeps the frames that came
with the request) is read by websockets' protocol while it is not open yet, and it answers
a close only when open; ``send_close`` then refuses to send one (an AssertionError), so
the peer's close is answered here, the way websockets answers one it could not echo."""

from __future__ import annotations

from websockets.server import ServerProtocol

CLOSE_NO_STATUS = 1005      # a close frame with no code: never sent (RFC 6455 section 7.4.1)
CLOSE_ABNORMAL = 1006       # no close frame at all: never sent
CLOSE_PROTOCOL_ERROR = 1002
CLOSE_BAD_DATA = 1007
CLOSE_POLICY = 1008


def clip_reason(reason: str) -> str:
    """A close reason fits in a control frame: 123 bytes of UTF-8 at most."""
    data = reason.encode()
    return reason if len(data) <= 120 else data[:120].decode(errors="ignore")


def answer_early_close(proto: ServerProtocol) -> None:
    """Answer the peer's close frame that ``proto`` read before it was open: its code
    echoed (RFC 6455 section 5.5.1; 1000 for none), and the protocol closing. ``fail`` is
    websockets' way to send a close after one came in."""
    close = proto.close_rcvd
    if close is None or close.code in (CLOSE_NO_STATUS, CLOSE_ABNORMAL):
        proto.fail(1000)
    else:
        proto.fail(close.code, clip_reason(close.reason))
