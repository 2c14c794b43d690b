"""Layers point one way (docs/ARCHITECTURE.md, "Layers"): protocol/ is the base;
headless/ (the client without a screen: connection, games' commands and bots, the
replay timeline) stands on it; server/ stands on both and never imports client/;
rich and Textual are imported only under client/. The server once imported the
client's bots, and with them rich: that import stalled every table for up to 2 s."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# folder -> import name (pyproject.toml's package-dir)
PACKAGES = {"protocol": "wildtable.protocol", "headless": "wildtable.headless", "server": "wildtable.server"}
UI = ("rich", "textual")
# what each layer may not import (its name or anything under it)
FORBIDDEN = {
    "protocol": ("wildtable.server", "wildtable.headless", "wildtable.client") + UI,
    "headless": ("wildtable.server", "wildtable.client") + UI,
    "server": ("wildtable.client",) + UI,
}


def _under(name: str, prefixes) -> str | None:
    return next((p for p in prefixes if name == p or name.startswith(p + ".")), None)


def imported(source: str, module: str, filename: str = "<source>") -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``source``, the module being
    ``module`` (dotted): relative imports resolved, ``import_module("...")`` included."""
    package = module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.append((node.lineno, mod))
            # `from wildtable import client` imports wildtable.client
            found += [(node.lineno, f"{mod}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in ("import_module", "__import__"):
                found.append((node.lineno, node.args[0].value))
    return found


def violations(folder: str) -> list[str]:
    out = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        rel = path.relative_to(ROOT / folder).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        module = ".".join([PACKAGES[folder]] + parts) + (".__init__" if path.name == "__init__.py" else "")
        for line, name in imported(path.read_text(), module, str(path)):
            if bad := _under(name, FORBIDDEN[folder]):
                out.append(f"{folder}/{rel}.py:{line}: imports {name} ({folder}/ may not import {bad})")
    return out


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_no_import_points_up(folder):
    assert violations(folder) == []


def test_the_check_sees_every_way_to_import_the_client():
    """The check itself: each of these in a server module is caught."""
    for source in ("from wildtable.client.tui import PlayApp", "import wildtable.client.viewer",
                   "from wildtable import client", "from ..client import tui", "from ..client.screens import x",
                   "def f():\n    from wildtable.client import screens",
                   "importlib.import_module('wildtable.client.tui')"):
        names = [n for _, n in imported(source, "wildtable.server.botseats")]
        assert any(_under(n, FORBIDDEN["server"]) for n in names), source
    names = [n for _, n in imported("from ..headless import bots\nfrom . import wire", "wildtable.server.botseats")]
    assert not any(_under(n, FORBIDDEN["server"]) for n in names)


def test_the_server_loads_no_ui():
    """In a fresh interpreter, the server with everything it loads later (its bots,
    the replay timeline) brings in neither the client nor rich nor Textual."""
    code = ("import sys, wildtable.server.app, wildtable.server.main, wildtable.server.replay_local\n"
            "import wildtable.headless.bots, wildtable.headless.timeline\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'textual')"
            " or m.startswith('wildtable.client')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
