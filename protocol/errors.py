"""Errors by whose fault they are, as h11 does it.

- ``ProtocolError``: the peer sent something we cannot read (bad frame, wrong type,
  unknown message). Carries a stable ``code`` and, where it applies, the field path.
- ``IllegalAction``: a well-formed action that the rules refuse. Carries a stable
  ``code`` and a sentence a player understands. Only the actor hears of it.
- ``LogError``: a log file that cannot be trusted (bad CRC in the middle, bad header).
Anything else raised from our code is our own bug.
"""


class WildtableError(Exception):
    code = "error"


class ProtocolError(WildtableError):
    """The peer's fault: the bytes or the shape of a message are wrong."""

    def __init__(self, code: str, message: str, path: str | None = None):
        self.code = code
        self.message = message
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class IllegalAction(WildtableError):
    """The rules refuse this action; the state is unchanged."""

    def __init__(self, code: str, reason: str):
        self.code = code
        self.reason = reason
        super().__init__(f"{code}: {reason}")


class LogError(WildtableError):
    """A log that cannot be read past some point. ``offset``/``seq`` say where."""

    def __init__(self, code: str, message: str, offset: int | None = None, seq: int | None = None):
        self.code = code
        self.message = message
        self.offset = offset
        self.seq = seq
        where = []
        if seq is not None:
            where.append(f"seq {seq}")
        if offset is not None:
            where.append(f"byte offset {offset}")
        super().__init__(f"{message} ({', '.join(where)})" if where else message)
