"""The strict codec: every message and log record round-trips, and every kind of bad
input is refused with a stable code and the path of the field at fault (DESIGN.md,
"Messages": strict, an int field given "42" is an error, every error names the path,
a size cap on every frame)."""

from __future__ import annotations

import math
import typing

import attrs
import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wildtable.protocol import codec, messages as m
from wildtable.protocol.codec import (
    INT_MAX, INT_MIN, MAX_DEPTH, MAX_FRAME, MAX_SERVER_FRAME, MAX_STR, Registry, to_data,
)
from wildtable.protocol.errors import ProtocolError
from wildtable.protocol.logfmt import (
    RECORDS, ActionAccepted, ChanceRecorded, Header, IntentRejected, SeatClaimed, StateHashed,
    encode_record, read_log,
)

from typed import typed

# ------------------------------------------------------------------ samples

# One instance per message type, with every field set to a non-default value so that a
# field the codec forgets to write or read shows up as an inequality.
MESSAGE_SAMPLES = {
    "hello": m.Hello(version=1, name="ann", client="wildtable-tui 0.1"),
    "list_tables": m.ListTables(),
    "create_table": m.CreateTable(game="run-wild", seats=4, settings={"target": 100, "fast": True,
                                                                     "nested": {"list": [1, "a", None, 2.5]}},
                                  name="friday", here=True),
    "join": m.Join(table="t1", seat=3),
    "rejoin": m.Rejoin(table="t1", seat=2, token="s3cr3t-token"),
    "spectate": m.Spectate(table="t1"),
    "leave": m.Leave(),
    "hint": m.Hint(),
    "hint_given": m.HintGiven(12, "ask p2 for 7s - hard's choice (Go Fish Wildcard has no expert that values "
                              "moves)", "hard", ({"action": {"kind": "ask", "target": 2, "rank": "7"},
                                                 "label": "ask p2 for 7s", "value": None},)),
    "seat_bots": m.SeatBots(table="t1", count=2, level="easy", delay_ms=500),
    "intent": m.Intent(id=17, action={"kind": "take", "meld": 3, "card": 41}),
    "welcome": m.Welcome(version=m.PROTOCOL_VERSION, server="wildtable 0.1", max_frame=MAX_FRAME, heartbeat=15.0,
                         nodes=("ws://10.0.0.1:8765", "ws://10.0.0.2:8765")),
    "error": m.Error(code="bad_field", message="expected int, got str", path="$.id", ref="intent"),
    "table_list": m.TableList(tables=({"table": "t1", "game": "run-wild", "seats": 4, "free": [1, 2]},
                                      {"table": "t2", "game": "go-wild", "seats": 2, "free": []}), omitted=3),
    "table_created": m.TableCreated(table="t1", game="run-wild", seats=4, settings={"target": 100}),
    "joined": m.Joined(table="t1", game="run-wild", seat=1, token="tok", seq=12,
                       view={"hand": [1, 2, 3], "melds": [[4, 5, 6]], "you": 1},
                       players=({"seat": 0, "name": "ann", "connected": True},)),
    "spectating": m.Spectating(table="t1", game="run-wild", seq=12, view={"melds": []},
                               players=({"seat": 0, "name": "ann", "connected": False},)),
    "left": m.Left(table="t1"),
    "bots_seated": m.BotsSeated(table="t1", seats=(1, 2), names=("bot1", "bot2"), level="easy"),
    "players": m.Players(table="t1", players=({"seat": 0, "name": "ann", "connected": True},
                                               {"seat": 1, "name": "bob", "connected": False})),
    "accepted": m.Accepted(intent=17, seq=13),
    "rejected": m.Rejected(intent=18, code="conflict", reason="Card 41 was taken a moment ago."),
    # (every field set, for the round trip: a real update has a view or a patch, not both)
    "update": m.Update(seq=13, events=({"event": "card_taken", "seat": 1, "card": 41},), view={"hand": [1]},
                       base=12, changed={"phase": "play"}, removed=("bonus",), items={"melds": [2, 1, {"id": 4}]}),
    "game_over": m.GameOver(table="t1", seq=99, scores=(10, -3, 0), winners=(0,), log="t1.wlog"),
    "goodbye": m.Goodbye(reason="server shutting down"),
    "notice": m.Notice(table="t1", code="storage_full", message="the server's disk is full: play is paused"),
    "redirect": m.Redirect(url="ws://10.0.0.2:8765", ref="join", table="t1", reason="t1 is played on another node"),
}

RECORD_SAMPLES = {
    "header": Header(format=2, game="run-wild", table="t1", seats=3, settings={"target": 100}, rules=2,
                     created="2024-05-01T12:00:00Z"),
    "seat": SeatClaimed(seat=1, name="bob", token_hash=bytes(range(32))),
    "chance": ChanceRecorded(seq=1, purpose="deal", permutation=(3, 0, 2, 1)),
    "action": ActionAccepted(seq=2, seat=0, action={"kind": "take", "meld": 3, "card": 41}, intent=17,
                             by="timer", recv=1234.5, delay=0.03, sent=1234.47, hold=0.06),
    "rejected": IntentRejected(after=2, seat=2, action={"kind": "take", "meld": 3, "card": 41},
                               code="conflict", reason="Card 41 was taken a moment ago.", intent=9,
                               recv=1234.5, delay=0.002, sent=1234.498, hold=0.06),
    "hash": StateHashed(seq=2, hash=bytes(range(16))),
}


def test_every_message_type_has_a_sample():
    """A new message type must come with a sample here, so its round trip is tested."""
    assert set(MESSAGE_SAMPLES) == set(m.MESSAGES.classes)
    for tag, sample in MESSAGE_SAMPLES.items():
        assert type(sample) is m.MESSAGES.classes[tag]


def test_every_record_type_has_a_sample():
    assert set(RECORD_SAMPLES) == set(RECORDS.classes)
    for tag, sample in RECORD_SAMPLES.items():
        assert type(sample) is RECORDS.classes[tag]


def _non_default_fields(sample):
    return [f.name for f in attrs.fields(type(sample))
            if f.default is attrs.NOTHING or getattr(sample, f.name) != (
                f.default.factory() if isinstance(f.default, attrs.Factory) else f.default)]


@pytest.mark.parametrize("tag", sorted(MESSAGE_SAMPLES))
def test_message_round_trip(tag):
    sample = MESSAGE_SAMPLES[tag]
    data = m.encode(sample)
    back = m.decode(data)
    assert back == sample
    assert type(back) is type(sample)
    # The wire map is the tag plus every field by name (never the class name).
    plain = msgpack.unpackb(data, raw=False)
    assert plain["type"] == tag
    assert set(plain) == {"type"} | {f.name for f in attrs.fields(type(sample))}
    # Samples set every field away from its default, so a dropped field cannot hide.
    assert _non_default_fields(sample) == [f.name for f in attrs.fields(type(sample))]
    # Encoding is deterministic.
    assert m.encode(back) == data


@pytest.mark.parametrize("tag", sorted(m.CLIENT_MESSAGES))
def test_client_messages_fit_the_client_frame_cap(tag):
    sample = MESSAGE_SAMPLES[tag]
    assert m.decode(m.encode(sample), max_size=MAX_FRAME) == sample


def test_optional_fields_may_be_omitted_and_take_their_defaults():
    assert m.decode(codec.packb({"type": "hello", "version": 1, "name": "ann"})) == m.Hello(1, "ann", "")
    assert m.decode(codec.packb({"type": "join", "table": "t"})) == m.Join("t", None)
    assert m.decode(codec.packb({"type": "join", "table": "t", "seat": None})) == m.Join("t", None)
    assert m.decode(codec.packb({"type": "create_table", "game": "g", "seats": 2})) == m.CreateTable("g", 2, {}, "")
    assert m.decode(codec.packb({"type": "error", "code": "c", "message": "x"})) == m.Error("c", "x")


@pytest.mark.parametrize("tag", sorted(RECORD_SAMPLES))
def test_record_round_trip(tag):
    sample = RECORD_SAMPLES[tag]
    data = encode_record(sample)
    payload = data[8:]
    back = RECORDS.decode(codec.unpackb(payload, max_size=len(payload)))
    assert back == sample
    assert type(back) is type(sample)
    assert codec.unpackb(payload)["t"] == tag
    assert _non_default_fields(sample) == [f.name for f in attrs.fields(type(sample))]


def test_records_with_defaults_round_trip():
    for r in (Header(1, "g", "t", 2, {}), ActionAccepted(1, None, {"kind": "go"}),
              IntentRejected(0, None, {}, "c", "r"), SeatClaimed(0, "", b"")):
        assert RECORDS.decode(codec.unpackb(encode_record(r)[8:])) == r


def test_all_records_round_trip_through_a_log():
    recs = [RECORD_SAMPLES["header"]] + [RECORD_SAMPLES[t] for t in ("seat", "chance", "action", "rejected", "hash")]
    contents = read_log(b"".join(encode_record(r) for r in recs))
    assert contents.header == recs[0]
    assert list(contents.records) == recs[1:]


# ------------------------------------------------------------------ bad input

def _refused(obj_or_bytes, *, max_size=None):
    data = obj_or_bytes if isinstance(obj_or_bytes, bytes) else msgpack.packb(obj_or_bytes, use_bin_type=True)
    with pytest.raises(ProtocolError) as info:
        m.decode(data, max_size=max_size)
    return info.value


INTENT = {"type": "intent", "id": 1, "action": {"kind": "take", "meld": 3, "card": 41}}


@pytest.mark.parametrize("data", [
    b"", b"\xc1", b"\x92\x01", b"\xa5ab", b"\x81\xa1a", b"\xd9",
    b"\xc7\x00\x05",                        # empty extension value: not plain data
    b"\x81\xa1a\xc7\x00\x05",               # ... even nested
    b"\x81\x91\x01\x01",                    # a list as a map key
    b"\xa2\xff\xfe",                        # invalid UTF-8 in a str
    b"\x91" * 5000 + b"\x01",               # nested far deeper than any parser stack
])
def test_not_msgpack_is_bad_frame(data):
    e = _refused(data)
    assert e.code == "bad_frame"
    assert e.path is None


def test_trailing_bytes_are_bad_frame():
    assert _refused(m.encode(m.Leave()) + b"\x00").code == "bad_frame"


def test_not_bytes_is_bad_frame():
    with pytest.raises(ProtocolError) as info:
        m.decode('{"type": "leave"}')
    assert info.value.code == "bad_frame"


@pytest.mark.parametrize("top", [[1, 2], "hello", 5, None, True, 1.5, b"\x00"])
def test_top_level_must_be_a_map(top):
    e = _refused(top)
    assert (e.code, e.path) == ("bad_field", "$")


def test_missing_type():
    e = _refused({"id": 1})
    assert (e.code, e.path) == ("missing_field", "$.type")
    e = _refused({"type": None})
    assert (e.code, e.path) == ("missing_field", "$.type")


def test_type_must_be_a_string():
    e = _refused({"type": 5})
    assert (e.code, e.path) == ("bad_field", "$.type")
    e = _refused({"type": b"hello", "version": 1, "name": "x"})
    assert (e.code, e.path) == ("bad_field", "$.type")


def test_unknown_type():
    e = _refused({"type": "helo"})
    assert (e.code, e.path) == ("unknown_message_type", "$.type")
    assert "hello" in e.message          # the error lists what is known
    # A class name is not a tag.
    assert _refused({"type": "Hello", "version": 1, "name": "x"}).code == "unknown_message_type"


def test_int_field_given_a_string_is_not_coerced():
    e = _refused({**INTENT, "id": "42"})
    assert (e.code, e.path) == ("bad_field", "$.id")
    assert "int" in e.message and "str" in e.message


@pytest.mark.parametrize("bad", [True, False, 1.0, None, [1], {"a": 1}, b"1"])
def test_int_field_refuses_other_types_including_bool(bad):
    e = _refused({**INTENT, "id": bad})
    assert (e.code, e.path) == ("bad_field", "$.id")


@pytest.mark.parametrize("bad", [1, 0, "true", None])
def test_bool_is_not_an_int_and_an_int_is_not_a_float(bad):
    welcome = {"type": "welcome", "version": 1, "server": "s", "max_frame": 10, "heartbeat": 1.5}
    e = _refused({**welcome, "heartbeat": bad})
    assert (e.code, e.path) == ("bad_field", "$.heartbeat")


@pytest.mark.parametrize("bad", [1, b"x", None, True, ["x"]])
def test_str_field_refuses_other_types(bad):
    e = _refused({"type": "spectate", "table": bad})
    assert (e.code, e.path) == ("bad_field", "$.table")


@pytest.mark.parametrize("bad", [[], "take", 3, None, b"take"])
def test_intent_action_must_be_a_map(bad):
    e = _refused({**INTENT, "action": bad})
    assert (e.code, e.path) == ("bad_field", "$.action")


def test_free_form_maps_need_string_keys_and_name_the_key():
    e = _refused({"type": "create_table", "game": "g", "seats": 2, "settings": {b"x": 1}})
    assert (e.code, e.path) == ("bad_field", "$.settings.x")
    e = _refused({"type": "create_table", "game": "g", "seats": 2, "settings": {"a": {7: 1}}})
    assert (e.code, e.path) == ("bad_field", "$.settings.a.7")
    e = _refused({**INTENT, "action": {"kind": "take", 3: 41}})
    assert (e.code, e.path) == ("bad_field", "$.action.3")


def test_free_form_values_are_checked_with_paths():
    e = _refused({"type": "create_table", "game": "g", "seats": 2, "settings": {"a": [0, {"b": 2**60}]}})
    assert (e.code, e.path) == ("bad_field", "$.settings.a[1].b")


def test_list_items_have_paths():
    e = _refused({"type": "game_over", "table": "t", "seq": 1, "scores": [1, 2, "3"]})
    assert (e.code, e.path) == ("bad_field", "$.scores[2]")
    e = _refused({"type": "players", "table": "t", "players": [{}, []]})
    assert (e.code, e.path) == ("bad_field", "$.players[1]")
    e = _refused({"type": "players", "table": "t", "players": ({"seat": 0}, {"s": {1: 2}})})
    assert (e.code, e.path) == ("bad_field", "$.players[1].s.1")


def test_list_field_must_be_a_list():
    e = _refused({"type": "game_over", "table": "t", "seq": 1, "scores": {"0": 1}})
    assert (e.code, e.path) == ("bad_field", "$.scores")


def test_unknown_field():
    e = _refused({**INTENT, "idd": 1})
    assert (e.code, e.path) == ("unknown_field", "$.idd")
    e = _refused({"type": "leave", 5: 1})
    assert (e.code, e.path) == ("unknown_field", "$.5")


def test_hostile_keys_are_shortened_in_errors():
    """The error reply must itself be decodable by the peer (Error.message/path <= MAX_STR)."""
    key = "k" * 50_000
    for obj in ({"type": "leave", key: 1}, {"type": "create_table", "game": "g", "seats": 2, "settings": {key: {1: 0}}}):
        e = _refused(obj)
        reply = m.Error(code=e.code, message=e.message, path=e.path, ref=obj["type"])
        assert m.decode(m.encode(reply)) == reply
        assert len(e.path) < 100


def test_missing_field():
    e = _refused({"type": "intent", "action": {}})
    assert (e.code, e.path) == ("missing_field", "$.id")
    e = _refused({"type": "intent", "id": 1})
    assert (e.code, e.path) == ("missing_field", "$.action")
    e = _refused({"type": "rejoin", "table": "t", "seat": 0})
    assert (e.code, e.path) == ("missing_field", "$.token")


def test_string_cap():
    ok = {"type": "hello", "version": 1, "name": "n" * 40}
    assert m.decode(codec.packb(ok)).name == "n" * 40
    e = _refused({**ok, "name": "n" * 41})
    assert (e.code, e.path) == ("bad_field", "$.name")
    # Characters, not bytes, count against the cap.
    assert m.decode(codec.packb({**ok, "name": "é" * 40})).name == "é" * 40
    # Fields without their own cap get MAX_STR.
    assert m.decode(codec.packb({"type": "goodbye", "reason": "r" * MAX_STR})).reason == "r" * MAX_STR
    e = _refused({"type": "goodbye", "reason": "r" * (MAX_STR + 1)})
    assert (e.code, e.path) == ("bad_field", "$.reason")


def test_list_cap():
    base = {"type": "game_over", "table": "t", "seq": 1}
    assert len(m.decode(codec.packb({**base, "scores": [0] * 64})).scores) == 64
    e = _refused({**base, "scores": [0] * 65})
    assert (e.code, e.path) == ("bad_field", "$.scores")


@pytest.mark.parametrize("field,value,ok", [
    ("id", 0, True), ("id", -1, False), ("id", 2**53, True), ("id", 2**53 + 1, False),
    ("id", 2**64 - 1, False), ("id", -(2**63), False),
])
def test_integer_range(field, value, ok):
    obj = {**INTENT, field: value}
    if ok:
        assert getattr(m.decode(codec.packb(obj)), field) == value
    else:
        e = _refused(obj)
        assert (e.code, e.path) == ("bad_field", f"$.{field}")


def test_integer_range_metadata_and_defaults():
    assert m.decode(codec.packb({"type": "join", "table": "t", "seat": 15})).seat == 15
    e = _refused({"type": "join", "table": "t", "seat": 16})
    assert (e.code, e.path) == ("bad_field", "$.seat")
    # A field with no bounds of its own is held to the exact-float range of INT_MIN..INT_MAX.
    assert m.decode(codec.packb({"type": "accepted", "intent": INT_MIN, "seq": INT_MAX})).seq == INT_MAX
    assert _refused({"type": "accepted", "intent": 0, "seq": INT_MAX + 1}).path == "$.seq"
    assert _refused({"type": "accepted", "intent": INT_MIN - 1, "seq": 0}).path == "$.intent"
    # ... and so are integers inside free-form maps.
    e = _refused({"type": "create_table", "game": "g", "seats": 2, "settings": {"x": INT_MAX + 1}})
    assert (e.code, e.path) == ("bad_field", "$.settings.x")


def _nested(depth):
    d = 0
    for _ in range(depth):
        d = {"a": d}
    return d


def test_deep_nesting_in_free_form_maps():
    ok = {"type": "create_table", "game": "g", "seats": 2, "settings": _nested(MAX_DEPTH)}
    assert m.decode(codec.packb(ok)).settings == _nested(MAX_DEPTH)
    e = _refused({**ok, "settings": _nested(MAX_DEPTH + 1)})
    assert e.code == "bad_field"
    assert e.path == "$.settings" + ".a" * (MAX_DEPTH + 1)
    lists = [[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]
    assert _refused({**INTENT, "action": {"kind": lists}}).code == "bad_field"


def test_frame_cap():
    # A client frame of exactly MAX_FRAME bytes is read; one byte more is refused unread.
    base = m.CreateTable(game="g", seats=2, settings={"pad": ""})
    pad = MAX_FRAME - len(m.encode(base)) - 2          # str8 -> str16 header adds 2 bytes
    frame = m.encode(attrs.evolve(base, settings={"pad": "x" * pad}))
    assert len(frame) == MAX_FRAME
    assert m.decode(frame, max_size=MAX_FRAME).settings["pad"] == "x" * pad
    frame = m.encode(attrs.evolve(base, settings={"pad": "x" * (pad + 1)}))
    e = _refused(frame, max_size=MAX_FRAME)
    assert e.code == "frame_too_large"
    # The default cap (for what the server sends) is MAX_SERVER_FRAME.
    big = m.encode(m.Update(seq=1, view={"pad": "x" * MAX_SERVER_FRAME}))
    assert _refused(big).code == "frame_too_large"
    assert m.decode(big, max_size=len(big)).view["pad"] == "x" * MAX_SERVER_FRAME


# ------------------------------------------------------------------ the codec itself, on a game-style registry

ACTIONS = Registry("kind", "action")


@attrs.frozen
class _Pos:
    meld: int = attrs.field(metadata={"min": 0, "max": 9})
    slot: int = attrs.field(default=0, metadata={"min": 0, "max": 9})


@ACTIONS.register("play")
@attrs.frozen
class _Play:
    cards: tuple[int, ...] = attrs.field(metadata={"max_items": 3, "item_min": 0, "item_max": 107})
    target: int | None = attrs.field(default=None, metadata={"min": 0, "max": 9})
    at: _Pos | None = None
    say: str = attrs.field(default="", metadata={"max_len": 5})
    fast: bool = False


def test_action_registry_round_trip_and_to_data():
    a = _Play(cards=(1, 107), target=9, at=_Pos(2, 3), say="hi", fast=True)
    data = to_data(a)
    assert data == {"kind": "play", "cards": [1, 107], "target": 9, "at": {"meld": 2, "slot": 3},
                    "say": "hi", "fast": True}
    assert ACTIONS.decode(data, "$.action") == a
    assert ACTIONS.decode(codec.unpackb(ACTIONS.encode(a))) == a
    assert ACTIONS.decode({"kind": "play", "cards": []}) == _Play(cards=())


@pytest.mark.parametrize("obj,code,path", [
    ({"kind": "ply", "cards": []}, "unknown_action", "$.action.kind"),
    ({"cards": []}, "missing_field", "$.action.kind"),
    ({"kind": "play"}, "missing_field", "$.action.cards"),
    ({"kind": "play", "cards": [1, 108]}, "bad_field", "$.action.cards[1]"),
    ({"kind": "play", "cards": [-1]}, "bad_field", "$.action.cards[0]"),
    ({"kind": "play", "cards": [1, 2, 3, 4]}, "bad_field", "$.action.cards"),
    ({"kind": "play", "cards": ["1"]}, "bad_field", "$.action.cards[0]"),
    ({"kind": "play", "cards": [], "target": 10}, "bad_field", "$.action.target"),
    ({"kind": "play", "cards": [], "target": "1"}, "bad_field", "$.action.target"),
    ({"kind": "play", "cards": [], "at": {"slot": 1}}, "missing_field", "$.action.at.meld"),
    ({"kind": "play", "cards": [], "at": {"meld": 1, "x": 1}}, "unknown_field", "$.action.at.x"),
    ({"kind": "play", "cards": [], "at": {"meld": True}}, "bad_field", "$.action.at.meld"),
    ({"kind": "play", "cards": [], "at": [1]}, "bad_field", "$.action.at"),
    ({"kind": "play", "cards": [], "say": "toolong"}, "bad_field", "$.action.say"),
    ({"kind": "play", "cards": [], "fast": 1}, "bad_field", "$.action.fast"),
    ({"kind": "play", "cards": [], "Kind": "play"}, "unknown_field", "$.action.Kind"),
])
def test_action_registry_refusals(obj, code, path):
    with pytest.raises(ProtocolError) as info:
        ACTIONS.decode(obj, "$.action")
    assert (info.value.code, info.value.path) == (code, path)


def test_duplicate_tag_is_refused():
    r = Registry("kind", "action")
    r.register("x")(attrs.frozen(type("A", (), {})))
    with pytest.raises(ValueError):
        r.register("x")(attrs.frozen(type("B", (), {})))


# ------------------------------------------------------------------ hostile input, generated

_scalars = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
            | st.floats(allow_nan=True) | st.text(max_size=20) | st.binary(max_size=20))
_keys = st.text(max_size=10) | st.integers(-5, 5) | st.binary(max_size=4) | st.booleans() | st.none()
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(_keys, inner, max_size=4), max_leaves=20)

_field_names = sorted({f.name for cls in m.MESSAGES.classes.values() for f in attrs.fields(cls)})


@st.composite
def _message_like(draw):
    """Maps that look like messages: a real tag, mostly real field names, arbitrary values."""
    tag = draw(st.sampled_from(sorted(m.MESSAGES.classes)))
    names = [f.name for f in attrs.fields(m.MESSAGES.classes[tag])]
    obj = {"type": tag}
    for name in names:
        if draw(st.booleans()) or draw(st.booleans()):
            obj[name] = draw(st.one_of(_values, st.just(to_data(getattr(MESSAGE_SAMPLES[tag], name)))))
    if draw(st.integers(0, 4)) == 0:
        obj[draw(st.sampled_from(_field_names) | _keys)] = draw(_values)
    return obj


def _decode_or_protocol_error(data):
    try:
        msg = m.decode(data)
    except ProtocolError as e:
        assert isinstance(e.code, str) and e.code
        return None
    assert type(msg) in m.MESSAGES.classes.values()
    # Whatever is accepted encodes again and reads back the same (NaN aside).
    again = m.decode(m.encode(msg))
    assert type(again) is type(msg)
    if not _has_nan(to_data(msg)):
        assert again == msg
    return msg


def _has_nan(v):
    if isinstance(v, float):
        return math.isnan(v)
    if isinstance(v, dict):
        return any(_has_nan(x) for x in v.values())
    if isinstance(v, list):
        return any(_has_nan(x) for x in v)
    return False


@settings(max_examples=300)
@given(_values | _message_like())
def test_arbitrary_values_decode_or_raise_protocol_error(value):
    _decode_or_protocol_error(msgpack.packb(value, use_bin_type=True))


@settings(max_examples=200)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_protocol_error(data):
    _decode_or_protocol_error(data)


@settings(max_examples=200)
@given(st.sampled_from(sorted(MESSAGE_SAMPLES)), st.data())
def test_damaged_frames_decode_or_raise_protocol_error(tag, data):
    frame = bytearray(m.encode(MESSAGE_SAMPLES[tag]))
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(frame) - 1))
        frame[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(frame)))
    _decode_or_protocol_error(bytes(frame[:cut]))
    _decode_or_protocol_error(bytes(frame))


def test_shared_update_frames_decode_exactly_like_whole_updates():
    """The server's spliced update frames (public part encoded once) must equal the plain
    encoding of the same update, for every seat and a spectator, at map sizes that need
    each msgpack map header form."""
    from wildtable.protocol.messages import SharedUpdate, Update, decode, encode
    for n_public in (1, 14, 15, 16, 40):
        public = {f"k{i}": [i, {"x": i}] for i in range(n_public)}
        for private in ({"seat": None}, {"seat": 2, "hand": [1, 5, 9], "pile": 7}):
            for events in ((), ({"event": "card_drawn", "seat": 2},)):
                frame = SharedUpdate(9, events, public).frame(private)
                whole = encode(Update(9, events, {**public, **private}))
                assert frame == whole
                assert decode(frame) == Update(9, tuple(events), {**public, **private})


# ------------------------------------------------------------------ the decoders' shortcuts

def test_builder_builds_what_the_class_builds():
    from wildtable.protocol.games import run_wild as rw
    for cls, args in [(ActionAccepted, (3, None, {"kind": "draw"}, 7, "timer", 1.5, 0.03, 1.47, 0.06)), (rw.Add, (2, 5, None)),
                      (rw.PlayMeld, ((1, 2, 3), ())), (rw.Draw, ())]:
        build = codec.builder(cls)
        assert build is not cls
        made, want = build(*args), cls(*args)
        assert typed(made) == typed(want) and made == want and repr(made) == repr(want)
        if cls is not ActionAccepted:        # its ``action`` map makes it unhashable
            assert hash(made) == hash(want)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            made.x = 1


def test_builder_leaves_classes_whose_init_does_more_to_the_class():
    @attrs.frozen
    class Validated:
        a: int = attrs.field(validator=attrs.validators.instance_of(int))

    @attrs.frozen
    class Converted:
        a: int = attrs.field(converter=int)

    @attrs.frozen
    class PostInit:
        a: int

        def __attrs_post_init__(self):
            raise ValueError("checked")

    @attrs.frozen(cache_hash=True)
    class CachedHash:
        a: int

    @attrs.frozen
    class NotInit:
        a: int
        b: int = attrs.field(init=False, default=0)

    @attrs.frozen(slots=False)
    class NoSlots:
        a: int

    @attrs.frozen(init=False)
    class OwnInit:
        a: int

        def __init__(self, a):
            self.__attrs_init__(a * 2)

    for cls in (Validated, Converted, PostInit, CachedHash, NotInit, NoSlots, OwnInit):
        assert codec.builder(cls) is cls, cls.__name__


def _tagged_classes():
    """Every class the codec decodes by a tag: the four games' actions, the messages, the
    log records, and this file's test actions."""
    from wildtable.protocol.engine import games
    return [(reg, tag, cls) for reg in [g.ACTIONS for g in games().values()] + [m.MESSAGES, RECORDS, ACTIONS]
            for tag, cls in sorted(reg.classes.items())]


_TAGGED_CLASSES = _tagged_classes()
_near_ints = (st.integers(-3, 130) | st.sampled_from([INT_MIN, INT_MAX, INT_MIN - 1, INT_MAX + 1])
              | st.booleans() | st.floats(-2, 130) | st.none() | st.text(max_size=3))
_field_values = _near_ints | st.lists(_near_ints, max_size=6) | st.lists(st.integers(0, 71), max_size=80) | _values


@st.composite
def _tagged_map(draw):
    """Maps shaped like an action, message or record: its tag, mostly its own field names,
    values near what the fields take (ints just in and out of range, bools, floats, long lists)."""
    reg, tag, cls = draw(st.sampled_from(_TAGGED_CLASSES))
    obj = {reg.tag_key: tag} if draw(st.integers(0, 9)) else {}
    for f in attrs.fields(cls):
        if draw(st.integers(0, 4)):
            obj[f.name] = draw(_field_values)
    if draw(st.integers(0, 9)) == 0:
        obj[draw(st.sampled_from(["card", "cards", "x", "kind", "type", "meld", "value"]))] = draw(_field_values)
    return reg, cls, obj


@settings(max_examples=2000)
@given(_tagged_map())
def test_the_one_pass_decoders_accept_only_what_the_field_checkers_accept(case):
    """Each generated one-pass decoder (codec._fast_decoder) must give exactly what the
    field-by-field checks give, or step aside (None) for them to refuse with a path."""
    reg, cls, obj = case
    fast = codec._fast_decoder(cls, reg.tag_key)
    if fast is None:
        return
    got = fast(obj)
    try:
        want = codec._decode_fields_checked(cls, obj, "$", reg.tag_key)
    except ProtocolError:
        assert got is None
        return
    assert got is None or typed(got) == typed(want)
    if obj.get(reg.tag_key) == cls.TAG:
        assert typed(reg.decode(obj)) == typed(want)


def test_every_action_of_the_four_games_has_a_one_pass_decoder():
    from wildtable.protocol.engine import games
    for g in games().values():
        for tag, cls in g.ACTIONS.classes.items():
            assert codec._fast_decoder(cls, "kind") is not None, (g.NAME, tag)


def _accepts(check, value) -> bool:
    try:
        check(value, "$")
    except ProtocolError:
        return False
    return True


def test_the_one_pass_decoders_keep_each_int_tuple_field_to_its_bounds():
    """At the edges, where random maps seldom go: the item cap, each item's range, and the
    types a tuple of ints refuses (a bool or float item, a string for the list)."""
    checked = 0
    for reg, tag, cls in _TAGGED_CLASSES:
        fast = codec._fast_decoder(cls, reg.tag_key)
        if fast is None:
            continue
        hints = typing.get_type_hints(cls)
        for f in attrs.fields(cls):
            items = codec._int_items(hints[f.name], dict(f.metadata))
            if items is None:
                continue
            cap, lo, hi = items
            # every other required field at a value its checker accepts
            base = {reg.tag_key: tag}
            for name, check, has_default, _ in codec._plan(cls)[0]:
                if name != f.name and not has_default:
                    base[name] = next(v for v in (0, "", [], {}, False, 0.0) if _accepts(check, v))
            for value, ok in [([lo] * min(cap, 100), True), ([hi], True), ([lo] * (cap + 1), False),
                              ([lo - 1], False), ([hi + 1], False), ([True], False), ([float(lo)], False),
                              ("1", False), ((lo,), False)] + [
                    # a long list (checked at C speed) with one bad item
                    ([lo] * 20 + [bad], False) for bad in (True, False, float(lo), hi + 1, lo - 1, None, "1")
            ] * (cap > 20):
                obj = dict(base, **{f.name: value})
                got = fast(obj)
                try:
                    want = codec._decode_fields_checked(cls, obj, "$", reg.tag_key)
                except ProtocolError:
                    assert got is None and not ok, (tag, f.name, value)
                    continue
                assert ok and typed(got) == typed(want), (tag, f.name, value)
                checked += 1
    assert checked >= 6
