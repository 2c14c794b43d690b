"""protocol/ is pure (DESIGN.md, "protocol/": a test fails if anything under protocol/
imports trio, socket, time, random or the file system). Randomness reaches an engine
only as a logged ChanceOutcome, time only as a logged action, so replay is exact."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PROTOCOL = Path(__file__).resolve().parents[2] / "protocol"

# Networking, concurrency, clocks, randomness, the file system and processes.
FORBIDDEN_MODULES = frozenset({
    "trio", "trio_websocket", "socket", "asyncio", "random", "time", "secrets", "os", "pathlib",
    "io", "subprocess", "threading",
    # The same things by other names.
    "datetime", "uuid", "tempfile", "shutil", "mmap", "select", "selectors", "ssl", "signal",
    "multiprocessing", "concurrent", "urllib", "http", "glob", "fileinput", "sqlite3",
})
FORBIDDEN_CALLS = frozenset({"open", "input", "breakpoint"})
DYNAMIC_IMPORTS = frozenset({"__import__", "import_module"})


def _root(name: str) -> str:
    return name.split(".")[0]


def violations(source: str, filename: str = "<source>") -> list[str]:
    """Every forbidden import or call in ``source``, as 'file:line: what'."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _root(alias.name) in FORBIDDEN_MODULES:
                    found.append(f"{where}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and _root(node.module) in FORBIDDEN_MODULES:
                found.append(f"{where}: from {node.module} import ...")
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if isinstance(f, ast.Name) and name in FORBIDDEN_CALLS:
                found.append(f"{where}: call {name}()")
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "builtins" \
                    and name in FORBIDDEN_CALLS:
                found.append(f"{where}: call builtins.{name}()")
            elif name in DYNAMIC_IMPORTS and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) \
                        and _root(arg.value) in FORBIDDEN_MODULES:
                    found.append(f"{where}: {name}({arg.value!r})")
    return found


def _sources() -> list[Path]:
    return sorted(PROTOCOL.rglob("*.py"))


def test_the_walk_sees_the_protocol_package():
    names = {p.relative_to(PROTOCOL).as_posix() for p in _sources()}
    assert {"__init__.py", "codec.py", "messages.py", "errors.py", "engine.py", "logfmt.py", "replay.py",
            "games/__init__.py"} <= names


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.relative_to(PROTOCOL).as_posix())
def test_protocol_module_is_pure(path):
    assert violations(path.read_text(encoding="utf-8"), str(path.relative_to(PROTOCOL.parent))) == []


@pytest.mark.parametrize("source", [
    "import trio",
    "import trio_websocket",
    "import os.path",
    "import time as clock",
    "import json, socket",
    "from random import shuffle",
    "from os import path",
    "from asyncio.tasks import sleep",
    "import secrets",
    "import pathlib",
    "from io import BytesIO",
    "import subprocess",
    "from threading import Lock",
    "from datetime import datetime",
    "def f():\n    import random\n    return random.random()",
    "data = open('table.wlog', 'rb').read()",
    "import builtins\nbuiltins.open('x')",
    "with open('x') as f:\n    pass",
    "m = __import__('os')",
    "import importlib\nm = importlib.import_module('random')",
    "class A:\n    def f(self):\n        return open(self.path)",
])
def test_the_check_can_fail(source):
    assert violations(source) != []


@pytest.mark.parametrize("source", [
    "import hashlib, struct, zlib, typing, types\nimport attrs, msgpack",
    "from . import codec\nfrom .engine import TableConfig\nfrom .time import x",   # relative: our own modules
    "from importlib import import_module\nm = import_module(f'{__name__}.run_wild')",
    "import timeit_free_name as t\nimport randomness",
    "x = self.open_meld(3)\ny = deck.opened",
])
def test_the_check_passes_pure_code(source):
    assert violations(source) == []
