"""What one connection may make the WebSocket layer do, frame by frame (docs/PROTOCOL.md,
"Connection lifetime", 5 and 6): every frame a peer sends costs it one token of a bucket,
data, control (ping, pong, close) and continuation alike; a message holds a bounded number
of fragments; and what we owe it (pongs) waits under the same caps as our data. The rules
are a value; server/wire.py's Peer holds the bucket's tokens and charges each slice of
input at once (one clock read and a subtraction a slice, not a check a frame).
"""

from __future__ import annotations

import attrs

FRAME_RATE = 200.0          # frames per second per connection, at least (twice the message rate if that is more)
FRAME_BURST = 400.0         # frames at once, at least (twice the message burst if that is more)
MAX_FRAGMENTS = 64          # frames one message may come in (serve --max-fragments)
BACKLOG_FRAMES = 512        # frames waiting for one peer's socket at most: ours and the pongs we owe
BACKLOG_BYTES = 1024 * 1024     # bytes waiting, beyond one frame, at most
# Input is parsed at most this many bytes at a time, other tasks running between: a frame
# is 6 bytes at least (a masked, empty one), so a slice is at most 341 frames, ~1 ms of
# parsing (bench: 3.5 us a frame), where a whole 64 KiB read was 11,000 frames and 70 ms.
FEED_SLICE = 2048


@attrs.frozen
class FrameRules:
    """One connection's frame budget and caps."""

    rate: float = FRAME_RATE
    burst: float = FRAME_BURST
    max_fragments: int = MAX_FRAGMENTS
    backlog_frames: int = BACKLOG_FRAMES
    backlog_bytes: int = BACKLOG_BYTES

    @classmethod
    def for_messages(cls, rate: float, burst: float, **caps) -> "FrameRules":
        """The frame budget beside a message rate limit of ``rate`` a second, bursts of
        ``burst``: room for every message it lets through, a pong and a ping or two."""
        return cls(max(FRAME_RATE, 2 * rate), max(FRAME_BURST, 2 * burst), **caps)

    def over_rate(self) -> str:
        return f"too many frames: at most {self.rate:g} a second, bursts of {self.burst:g} (pings and fragments count)"

    def too_many_fragments(self) -> str:
        return f"a message in more than {self.max_fragments} fragments"

    def owed_too_much(self, frames: int, size: int) -> str | None:
        """Why the backlog (``frames`` waiting, ``size`` bytes) is over its caps, or None.
        Bytes count beyond the first frame, however big that one is."""
        if frames > self.backlog_frames or (frames > 1 and size > self.backlog_bytes):
            return (f"too much owed: {frames} frames, {size} bytes waiting for you to read "
                    f"(at most {self.backlog_frames}, {self.backlog_bytes}); read what you ask for")
        return None

