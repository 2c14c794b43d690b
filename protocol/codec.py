"""One strict msgpack codec, shared by the wire, the log and the engines' actions.

Classes are attrs frozen/slotted values registered under a stable string tag (never
the class name). Decoding validates every field against its annotation and never
coerces: an int field given "42" is an error naming the path (``$.action.card``).
"""

from __future__ import annotations

import types
import typing
from typing import Any

import attrs
import msgpack

from .errors import ProtocolError

MAX_FRAME = 64 * 1024          # client -> server frames
MAX_SERVER_FRAME = 4 * 1024 * 1024  # server -> client frames (snapshots of big tables)
MAX_STR = 1000                 # default cap on a string field
MAX_ITEMS = 512                # default cap on a list field
MAX_DEPTH = 16                 # nesting of free-form maps (settings)
INT_MIN, INT_MAX = -(2**53), 2**53

_packer = msgpack.Packer(use_bin_type=True)


def packb(obj: Any) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


def packer() -> Any:
    """A new msgpack Packer whose ``pack(obj)`` is ``packb(obj)``, byte for byte: for code
    that packs many values at once (a Packer made per packb call is most of its cost for a
    small value). One per caller and call: a Packer is not shared between threads."""
    return msgpack.Packer(use_bin_type=True, buf_size=4096)


def unpackb(data: bytes, *, max_size: int = MAX_FRAME) -> Any:
    """Bytes to plain msgpack data; a protocol error if they are not one msgpack value."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ProtocolError("bad_frame", "expected a binary frame holding one msgpack value")
    if len(data) > max_size:
        raise ProtocolError("frame_too_large", f"frame of {len(data)} bytes exceeds the cap of {max_size} bytes")
    try:
        return msgpack.unpackb(
            data, raw=False, strict_map_key=False, use_list=True,
            max_bin_len=max_size, max_str_len=max_size, max_array_len=max_size,
            max_map_len=max_size, max_ext_len=0, ext_hook=_no_ext,
        )
    except msgpack.ExtraData:
        raise ProtocolError("bad_frame", "frame holds more than one msgpack value") from None
    except (ValueError, msgpack.UnpackException, TypeError) as e:
        raise ProtocolError("bad_frame", f"frame is not valid msgpack ({type(e).__name__})") from None
    except RecursionError:
        raise ProtocolError("bad_frame", "frame is nested too deeply") from None


def _no_ext(code: int, data: bytes) -> Any:
    # max_ext_len=0 still lets an empty extension through as an ExtType: not plain data.
    raise ValueError(f"msgpack extension type {code} is not allowed")


def _key_text(k: Any) -> str:
    """A map key as short text for paths and messages (a bin key shows as text); capped so
    an error naming a hostile key still fits the peer's MAX_STR on the ``error`` message."""
    text = k.decode("utf-8", "replace") if isinstance(k, bytes) else str(k)
    return text if len(text) <= 40 else text[:40] + "..."


def _key_path(path: str, k: Any) -> str:
    """The path of a map entry, also for a key that is not a string."""
    return f"{path}.{_key_text(k)}"


def _type_name(v: Any) -> str:
    return {bool: "bool", int: "int", str: "str", bytes: "bytes", float: "float",
            list: "list", dict: "map", type(None): "nil"}.get(type(v), type(v).__name__)


def _fail(path: str, expected: str, v: Any) -> ProtocolError:
    return ProtocolError("bad_field", f"expected {expected}, got {_type_name(v)}", path)


def _plain_ok(v: Any, depth: int) -> bool:
    """Fast validity test of free-form data (no paths built); see check_free."""
    t = type(v)
    if t is str or t is bool or v is None or t is float or t is bytes:
        return True
    if t is int:
        return INT_MIN <= v <= INT_MAX
    if depth >= MAX_DEPTH:
        return False
    if t is dict:
        for k, x in v.items():
            if type(k) is not str or not _plain_ok(x, depth + 1):
                return False
        return True
    if t is list:
        for x in v:
            if not _plain_ok(x, depth + 1):
                return False
        return True
    return False


def check_free(v: Any, path: str, depth: int = 0) -> Any:
    """Free-form data (settings, views): maps with str keys, lists, scalars; bounded depth.
    Valid data is returned as it is; the slow walk that names the bad path runs only on error."""
    if _plain_ok(v, depth):
        return v
    return _check_free_slow(v, path, depth)


def _check_free_slow(v: Any, path: str, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise ProtocolError("bad_field", "nested too deeply", path)
    if isinstance(v, dict):
        for k, x in v.items():
            if not isinstance(k, str):
                raise ProtocolError("bad_field", f"map keys must be strings, got {_type_name(k)}", _key_path(path, k))
            _check_free_slow(x, _key_path(path, k), depth + 1)
        return v
    if isinstance(v, list):
        for i, x in enumerate(v):
            _check_free_slow(x, f"{path}[{i}]", depth + 1)
        return v
    if isinstance(v, int) and not isinstance(v, bool) and not INT_MIN <= v <= INT_MAX:
        raise ProtocolError("bad_field", "integer out of range", path)
    if v is None or isinstance(v, (bool, int, float, str, bytes)):
        return v
    raise _fail(path, "plain data", v)


def _make_checker(tp: Any, meta: dict, registry_of: dict) -> Any:
    """Build a function (value, path) -> value for one annotation."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any or tp is dict or origin is dict:
        def check_map(v, path):
            if tp is not Any and not isinstance(v, dict):
                raise _fail(path, "map", v)
            return check_free(v, path)
        return check_map
    if origin in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        inner = _make_checker(non_none[0], meta, registry_of) if len(non_none) == 1 else None
        if inner is None:
            raise TypeError(f"unsupported union {tp}")
        def check_opt(v, path):
            return None if v is None else inner(v, path)
        return check_opt
    if tp is bool:
        def check_bool(v, path):
            if type(v) is not bool:
                raise _fail(path, "bool", v)
            return v
        return check_bool
    if tp is int:
        lo = meta.get("min", INT_MIN)
        hi = meta.get("max", INT_MAX)
        def check_int(v, path):
            if type(v) is not int:
                raise _fail(path, "int", v)
            if not lo <= v <= hi:
                raise ProtocolError("bad_field", f"integer {v} out of range {lo}..{hi}", path)
            return v
        return check_int
    if tp is float:
        def check_float(v, path):
            if type(v) is not float:
                raise _fail(path, "float", v)
            return v
        return check_float
    if tp is str:
        cap = meta.get("max_len", MAX_STR)
        printable = meta.get("printable", False)
        def check_str(v, path):
            if type(v) is not str:
                raise _fail(path, "str", v)
            if len(v) > cap:
                raise ProtocolError("bad_field", f"string longer than {cap} characters", path)
            if printable and not v.isprintable():
                raise ProtocolError("bad_field", unprintable_text(v), path)
            return v
        return check_str
    if tp is bytes:
        cap = meta.get("max_len", MAX_STR)
        def check_bytes(v, path):
            if type(v) is not bytes:
                raise _fail(path, "bytes", v)
            if len(v) > cap:
                raise ProtocolError("bad_field", f"bytes longer than {cap}", path)
            return v
        return check_bytes
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item_meta = {k[5:]: x for k, x in meta.items() if k.startswith("item_")}
            item = _make_checker(args[0], item_meta, registry_of)
            cap = meta.get("max_items", MAX_ITEMS)
            fast = _fast(args[0], item_meta)
            if fast is not None and fast[0] is int:
                cap, lo, hi = _int_items(tp, meta)
                def check_ints(v, path):
                    # one pass without paths; the per-item walk that names the bad one runs on error
                    if type(v) is list and len(v) <= cap and all(type(x) is int and lo <= x <= hi for x in v):
                        return tuple(v)
                    return check_list(v, path)
            def check_list(v, path):
                if type(v) is not list:
                    raise _fail(path, "list", v)
                if len(v) > cap:
                    raise ProtocolError("bad_field", f"more than {cap} items", path)
                return tuple(item(x, f"{path}[{i}]") for i, x in enumerate(v))
            return check_ints if fast is not None and fast[0] is int else check_list
        raise TypeError(f"unsupported tuple {tp}")
    if attrs.has(tp):
        def check_nested(v, path):
            return decode_fields(tp, v, path)
        return check_nested
    raise TypeError(f"unsupported field type {tp!r}")


def unprintable_text(v: str) -> str:
    """Why a string that must be printable is refused, naming its first bad character."""
    c = next(c for c in v if not c.isprintable())
    return (f"holds a character that is not printable (U+{ord(c):04X}): no control, escape, "
            "formatting or line-breaking characters")


def _fast(tp: Any, meta: dict):
    """For scalar fields, (type, lo, hi) so decode_fields can accept a good value inline
    (None for a string that must be printable: its checker looks at every character)."""
    if tp is int:
        return (int, meta.get("min", INT_MIN), meta.get("max", INT_MAX))
    if tp is str and meta.get("printable"):
        return None
    if tp is str:
        return (str, 0, meta.get("max_len", MAX_STR))
    if tp is bool:
        return (bool, None, None)
    return None


def _int_items(tp: Any, meta: dict):
    """For a ``tuple[int, ...]`` field, (max items, lo, hi) of each item, the bounds its
    checker applies; None for any other annotation."""
    args = typing.get_args(tp)
    if typing.get_origin(tp) is tuple and args == (int, Ellipsis):
        item_meta = {k[5:]: x for k, x in meta.items() if k.startswith("item_")}
        return meta.get("max_items", MAX_ITEMS), item_meta.get("min", INT_MIN), item_meta.get("max", INT_MAX)
    return None


def builder(cls: type) -> Any:
    """A function ``build(*fields)`` equal to ``cls(*fields)`` (every field, in order) for
    the attrs slotted classes the decoders build by the thousand (records, actions). attrs'
    frozen ``__init__`` sets each field through ``object.__setattr__`` (0.6 us for the six
    of ActionAccepted); ``build`` sets the same slots through their descriptors (0.4 us).
    Only for classes whose ``__init__`` is attrs' own and does nothing else - no validator,
    converter, init=False field, pre/post-init hook or cached hash -; any other class
    gets ``cls``."""
    fields = attrs.fields(cls)
    init_code = getattr(cls.__init__, "__code__", None)  # type: ignore[misc]  # the class's own, as generated
    plain = (
        init_code is not None and init_code.co_filename.startswith("<attrs generated")
        and all(f.init and f.validator is None and f.converter is None for f in fields)
        and not any(hasattr(cls, h) for h in ("__attrs_pre_init__", "__attrs_post_init__"))
        and "_attrs_cached_hash" not in getattr(cls, "__slots__", ("_attrs_cached_hash",))
    )
    # the slot descriptors of fields defined on a base class are looked up there
    slots = [getattr(cls, f.name, None) for f in fields]
    if not plain or not all(type(d) is types.MemberDescriptorType for d in slots):
        return cls
    env = {"_new": object.__new__, "cls": cls}
    lines = [f"def build({', '.join(f'v{i}' for i in range(len(fields)))}):", "    o = _new(cls)"]
    for i, d in enumerate(slots):
        env[f"_set{i}"] = d.__set__  # type: ignore[union-attr]  # every d is a slot descriptor (checked above)
        lines.append(f"    _set{i}(o, v{i})")
    lines.append("    return o")
    exec("\n".join(lines), env)
    return env["build"]


def _plan(cls: type) -> tuple:
    """Cached (fields, known names) of an attrs class; each field is
    (name, checker, has_default, fast)."""
    plan = cls.__dict__.get("_codec_plan")
    if plan is None:
        hints = typing.get_type_hints(cls)
        fields = tuple(
            (f.name, _make_checker(hints[f.name], dict(f.metadata), {}),
             f.default is not attrs.NOTHING, _fast(hints[f.name], dict(f.metadata)))
            for f in attrs.fields(cls)
        )
        # Fields left out of the encoding when they hold their (plain, immutable) default:
        # decoding restores them, and records and frames get smaller.
        omit = tuple(
            (f.name, f.default) for f in attrs.fields(cls)
            if f.default is not attrs.NOTHING
            and (f.default is None or type(f.default) in (bool, int, float, str, bytes, tuple))
        )
        convs = tuple((f.name, _conv_kind(hints[f.name])) for f in attrs.fields(cls))
        plan = (fields, frozenset(f[0] for f in fields), dict(omit), convs)
        type.__setattr__(cls, "_codec_plan", plan)
    return plan


_MISSING = object()


#: a tuple-of-ints field that may hold more items than this (a chance record's
#: permutation, up to 100,000) is no memo key: each differs, and hashing it costs
_MEMO_ITEMS = 1000

#: values each generated decoder keeps to share (an action repeats: a card played, a meld
#: added to); past this many, it builds each new one
_FAST_MEMO = 4096


def _fast_decoder(cls: type, tag_key: str | None):
    """A generated decoder for classes whose fields are all scalars, tuples of ints, maps
    of free-form data or bytes (every action of the four games, every log record): it
    accepts a well-formed map in one pass, or returns None so that decode_fields runs the
    full checks and names what is wrong. Cached per (class, tag key)."""
    cache = cls.__dict__.get("_codec_fast")
    if cache is None:
        cache = {}
        type.__setattr__(cls, "_codec_fast", cache)
    if tag_key in cache:
        return cache[tag_key]
    fields = _plan(cls)[0]
    hints = typing.get_type_hints(cls)
    env = {"cls": builder(cls), "_M": _MISSING, "_plain_ok": _plain_ok}
    lines = ["def fast(obj):", "    n = 0"]
    args = []
    memo = True             # values shared by their fields (below)
    for i, (name, _, has_default, fast) in enumerate(fields):
        tp = hints[name]
        default = attrs.fields_dict(cls)[name].default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]  # a class at run time; a default built per instance: not inlined
            cache[tag_key] = None
            return None
        items = _int_items(tp, dict(attrs.fields_dict(cls)[name].metadata))
        if items is not None:
            # a tuple of ints (cards): the checks of check_ints, then the same tuple
            env[f"cap{i}"], env[f"lo{i}"], env[f"hi{i}"] = items
            if items[0] > _MEMO_ITEMS:
                memo = False        # a permutation (a chance record's): no key worth hashing and keeping
            env[f"d{i}"] = default
            lines += _get_field(i, name, has_default)
            lines.append(f"        if type(v{i}) is not list or len(v{i}) > cap{i}:")
            lines.append("            return None")
            lines.append(f"        for x in v{i}:")
            lines.append(f"            if type(x) is not int or not lo{i} <= x <= hi{i}:")
            lines.append("                return None")
            lines.append(f"        v{i} = tuple(v{i})")
            args.append(f"v{i}")
            continue
        if tp is dict or typing.get_origin(tp) is dict or tp is bytes:
            # a map (a header's settings: free-form data, check_free's test) or bytes (a
            # hash) as their checkers take them
            env[f"d{i}"] = default
            lines += _get_field(i, name, has_default)
            if tp is bytes:
                env[f"hi{i}"] = attrs.fields_dict(cls)[name].metadata.get("max_len", MAX_STR)
                lines.append(f"        if type(v{i}) is not bytes or len(v{i}) > hi{i}:")
            else:
                memo = False        # a map is no key
                lines.append(f"        if type(v{i}) is not dict or not _plain_ok(v{i}, 0):")
            lines.append("            return None")
            args.append(f"v{i}")
            continue
        optional = False
        if typing.get_origin(tp) in (typing.Union, types.UnionType):
            non_none = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(non_none) != 1 or type(None) not in typing.get_args(tp):
                cache[tag_key] = None
                return None
            optional = True
            meta = dict(attrs.fields_dict(cls)[name].metadata)
            fast = _fast(non_none[0], meta)
        if fast is None:
            cache[tag_key] = None
            return None
        t, lo, hi = fast
        env[f"t{i}"], env[f"lo{i}"], env[f"hi{i}"] = t, lo, hi
        env[f"d{i}"] = default
        lines += _get_field(i, name, has_default)
        cond = f"type(v{i}) is not t{i}"
        if t is int:
            cond += f" or not lo{i} <= v{i} <= hi{i}"
        elif t is str:
            cond += f" or len(v{i}) > hi{i}"
        if optional:
            cond = f"v{i} is not None and ({cond})"
        lines.append(f"        if {cond}:")
        lines.append("            return None")
        args.append(f"v{i}")
    extra = f" + ({tag_key!r} in obj)" if tag_key is not None else ""
    lines.append(f"    if len(obj) != n{extra}:")
    lines.append("        return None")
    # the value for these fields, built once and shared (values are immutable): every
    # field was checked to be of its one type above (int, str, bool, a tuple of ints, or
    # None where optional), so equal keys are equal values (no 1 / 1.0 / True); bounded
    env["_memo"], env["_cap"] = {}, _FAST_MEMO
    key = args[0] if len(args) == 1 else f"({', '.join(args)},)" if args else "()"
    if memo:
        lines += [f"    k = {key}", "    v = _memo.get(k)", "    if v is None:", f"        v = cls({', '.join(args)})",
                  "        if len(_memo) < _cap:", "            _memo[k] = v", "    return v"]
    else:
        lines.append(f"    return cls({', '.join(args)})")
    exec("\n".join(lines), env)
    cache[tag_key] = env["fast"]
    return env["fast"]


def _get_field(i: int, name: str, has_default: bool) -> list[str]:
    """Generated lines: field ``name`` into ``v{i}`` (its default ``d{i}`` when missing,
    else the decoder gives up), counting the fields present in ``n``; the checks of a
    present value follow, indented under the ``else``."""
    return [f"    v{i} = obj.get({name!r}, _M)",
            f"    if v{i} is _M:",
            f"        {'v%d = d%d' % (i, i) if has_default else 'return None'}",
            "    else:",
            "        n += 1"]


def decode_fields(cls: type, obj: Any, path: str, tag_key: str | None = None) -> Any:
    if type(obj) is not dict:
        raise _fail(path, "map", obj)
    fast = _fast_decoder(cls, tag_key)
    if fast is not None:
        value = fast(obj)
        if value is not None:
            return value
    return _decode_fields_checked(cls, obj, path, tag_key)


def _decode_fields_checked(cls: type, obj: dict, path: str, tag_key: str | None) -> Any:
    """decode_fields without the generated one-pass decoder: every field through its
    checker, so a refusal names its path (and the tests compare the two)."""
    fields, known, _, _ = _plan(cls)
    extra = len(obj) - (tag_key in obj if tag_key is not None else 0)
    kwargs = {}
    for name, check, has_default, fast in fields:
        v = obj.get(name, _MISSING)
        if v is _MISSING:
            if not has_default:
                raise ProtocolError("missing_field", "required field is missing", f"{path}.{name}")
            continue
        extra -= 1
        if fast is not None and type(v) is fast[0]:
            t = fast[0]
            if t is int:
                if fast[1] <= v <= fast[2]:
                    kwargs[name] = v
                    continue
            elif t is str:
                if len(v) <= fast[2]:
                    kwargs[name] = v
                    continue
            else:
                kwargs[name] = v
                continue
        kwargs[name] = check(v, f"{path}.{name}")
    if extra:
        for k in obj:
            if k != tag_key and k not in known:
                raise ProtocolError("unknown_field", f"unknown field {_key_text(k)!r} for {getattr(cls, 'TAG', cls.__name__)!r}",
                                    _key_path(path, k))
    return cls(**kwargs)


_AS_IS, _SHALLOW, _NESTED, _NESTED_SEQ, _DEEP = range(5)


def _conv_kind(tp: Any) -> int:
    """How to_data turns a field of this annotation into plain data, known once per class:
    free-form maps (views, events, settings) are plain by contract and are not walked."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        return _conv_kind(non_none[0]) if len(non_none) == 1 else _DEEP
    if tp in (int, str, bool, float, bytes, dict) or origin is dict:
        return _AS_IS
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = args[0]
        if attrs.has(item):
            return _NESTED_SEQ
        if item in (int, str, bool, float, bytes, dict) or typing.get_origin(item) is dict:
            return _SHALLOW
        return _DEEP
    if attrs.has(tp):
        return _NESTED
    return _DEEP


def to_data(value: Any) -> Any:
    """attrs values -> plain msgpack data (tuples become lists)."""
    cls = type(value)
    if attrs.has(cls):
        d = {}
        tag = getattr(cls, "TAG", None)
        if tag is not None:
            d[cls.TAG_KEY] = tag  # type: ignore[attr-defined]  # set with TAG by Registry.register
        _, _, omit, convs = _plan(cls)
        for name, kind in convs:
            v = getattr(value, name)
            if name in omit:
                dv = omit[name]
                if v is dv or (type(v) is type(dv) and v == dv):
                    continue
            if kind == _AS_IS or v is None:
                d[name] = v
            elif kind == _SHALLOW:
                d[name] = list(v)
            elif kind == _NESTED_SEQ:
                d[name] = [to_data(x) for x in v]
            else:
                d[name] = to_data(v)
        return d
    if cls is tuple or cls is list:
        return [to_data(x) for x in value]
    if cls is dict:
        return {k: to_data(x) for k, x in value.items()}
    return value


class Registry:
    """A family of tagged classes decoded by one key (``type`` for messages, ``kind`` for actions)."""

    def __init__(self, tag_key: str, what: str):
        self.tag_key = tag_key
        self.what = what
        self.classes: dict[str, type] = {}
        self._fast: dict = {}       # tag -> generated one-pass decoder (see _fast_decoder)

    def register(self, tag: str):
        def deco(cls):
            if tag in self.classes:
                raise ValueError(f"duplicate {self.what} tag {tag!r}")
            cls.TAG = tag
            cls.TAG_KEY = self.tag_key
            self.classes[tag] = cls
            self._fast.pop(tag, None)
            return cls
        return deco

    def decode(self, obj: Any, path: str = "$") -> Any:
        if type(obj) is dict:
            # the common case first: a well-formed map of a class _fast_decoder covers, in one pass
            tag = obj.get(self.tag_key)
            fast = self._fast.get(tag) if type(tag) is str else None
            if fast is not None:
                value = fast(obj)
                if value is not None:
                    return value
        else:
            raise _fail(path, f"map (a {self.what})", obj)
        tag = obj.get(self.tag_key)
        if tag is None:
            raise ProtocolError("missing_field", f"a {self.what} needs a {self.tag_key!r} field", f"{path}.{self.tag_key}")
        if type(tag) is not str:
            raise _fail(f"{path}.{self.tag_key}", "str", tag)
        cls = self.classes.get(tag)
        if cls is None:
            known = ", ".join(sorted(self.classes))
            raise ProtocolError(f"unknown_{self.what.replace(' ', '_')}",
                                f"unknown {self.what} {tag[:40]!r}; known: {known}", f"{path}.{self.tag_key}")
        if tag not in self._fast:
            self._fast[tag] = _fast_decoder(cls, self.tag_key)
        return decode_fields(cls, obj, path, self.tag_key)

    def fast_decoder(self, tag: str) -> Any:
        """The generated one-pass decoder of ``tag``'s class (see _fast_decoder): a function
        of a map that returns the value, or None where ``decode`` must run the full checks
        (and name what is wrong); None for an unknown tag or a class it does not cover.
        For loops that decode many maps of a few tags (replay)."""
        cls = self.classes.get(tag)
        if cls is None:
            return None
        if tag not in self._fast:
            self._fast[tag] = _fast_decoder(cls, self.tag_key)
        return self._fast[tag]

    def decode_bytes(self, data: bytes, max_size: int = MAX_FRAME) -> Any:
        return self.decode(unpackb(data, max_size=max_size))

    def encode(self, value: Any) -> bytes:
        return packb(to_data(value))
