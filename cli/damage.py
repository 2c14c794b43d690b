"""What every mode of `wildtable replay` says about a damaged log, and `--salvage OUT`,
which writes its good prefix as a new log (docs/LOG-FORMAT.md 5, "Reading up to the
damage"): one bad byte hides nothing before it."""

from __future__ import annotations

import sys

from wildtable.protocol.errors import LogError
from wildtable.protocol.prefix import Prefix, replay_prefix

#: what each damage code means, in the words of a developer reading the report
_WHAT = {
    "bad_crc": "a record's bytes changed after it was written (its CRC does not match)",
    "bad_frame": "a record's length field is damaged",
    "bad_record": "a record that does not decode, or makes no sense here",
    "seq_gap": "records are missing or out of order",
    "diverged": "a logged action no longer applies under these rules",
    "hash_mismatch": "the replayed state differs from the logged hash (a rules change, or an edited log)",
    "misplaced_hash": "a hash record was moved or edited",
}


def damage_lines(log: str, prefix: Prefix) -> list[str]:
    """The lines that name the damage and say what to do about it."""
    d = prefix.damage
    assert d is not None
    c = prefix.contents
    last = prefix.result.seq
    what = _WHAT.get(d.code, d.code)
    where = f"byte offset {d.offset}" + (f", where seq {d.seq} was expected" if d.code in (
        "bad_crc", "bad_frame", "bad_record", "seq_gap") else f", at seq {d.seq}" if d.seq is not None else "")
    return [
        f"damage: {d.message} ({where}): {what} [{d.code}]",
        f"good prefix: the header and {len(c.records)} records before the damage, up to seq {last}, "
        f"in its first {c.good_length} of {prefix.size} bytes; nothing after the damage is read",
        f"to keep them: wildtable replay {log} --salvage OUT writes them as a new log that verifies; "
        f"--upto {last} or less reads this log as if it ended there",
    ]


def upto_note(path, later: LogError, upto: int) -> str:
    """--upto stops before the damage: said, not hidden, and no failure."""
    return (f"note: {path}: damaged later ({later}); --upto {upto} stops before it, so the records "
            "shown are all good")


def salvage_main(args, path, data: bytes) -> int:
    """Write the good prefix of ``data`` to ``args.salvage`` (0600, never over a file):
    a log that `replay --verify` reads as whole (or INCOMPLETE: a game cut short)."""
    out = args.salvage
    try:
        prefix = replay_prefix(data)
    except LogError as e:
        print(f"wildtable replay: {path}: {e}; nothing can be salvaged: the header itself does not read",
              file=sys.stderr)
        return 1
    good = data[:prefix.contents.good_length]
    from .offline import write_new_log
    failed = write_new_log("replay", out, good, "give --salvage another file")
    if failed:
        return failed
    c = prefix.contents
    why = (f"the damage at byte offset {prefix.damage.offset} and after left out ({prefix.damage.message})"
           if prefix.damage is not None else
           f"the torn tail of {c.torn.dropped} bytes left out" if c.torn is not None else "the whole log: it is not damaged")
    print(f"{out}: the header and {len(c.records)} records, up to seq {prefix.result.seq}, {len(good)} bytes; {why}")
    return 0
