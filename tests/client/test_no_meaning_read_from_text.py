"""No UI or bot decides by reading display text back (issue #23): the full-screen UI once
knew the timer had played by ``n.text.startswith("the timer played for you")``, and the
bots knew the connection was lost by ``"lost" in n.text``; rewording either line broke
them silently. Notices are typed (headless/notices.py) and code dispatches on the type.

This scans every module of client/ and headless/ (the AST, not the text) for the shapes
of that mistake: a ``.text`` searched or compared (``in``, ``==``, ``startswith``, ``re``),
or a ``.kind`` compared or kept in a name (the line mode's tag word, for display only)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEARCHES = frozenset(("startswith", "endswith", "find", "rfind", "index", "count", "__contains__"))


def _is_attr(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == name


def offences(source: str, filename: str = "<source>") -> list[str]:
    """Each place in ``source`` where code reads meaning out of a ``.text`` or compares a ``.kind``."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, (ast.Assign, ast.NamedExpr)) and _is_attr(node.value, "kind"):
            found.append(f"{where}: keeps a .kind (to compare it later)")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_attr(x, "kind") for x in sides):
                found.append(f"{where}: compares a .kind")
            elif any(_is_attr(x, "text") for x in sides) and any(
                    isinstance(op, (ast.In, ast.NotIn, ast.Eq, ast.NotEq)) for op in node.ops):
                found.append(f"{where}: compares or searches a .text")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in SEARCHES and _is_attr(node.func.value, "text"):
                found.append(f"{where}: .text.{node.func.attr}(...)")
            elif (isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                  and any(_is_attr(a, "text") for a in node.args)):
                found.append(f"{where}: re.{node.func.attr} on a .text")
    return found


def test_no_module_of_the_client_reads_meaning_out_of_display_text():
    found = []
    for folder in ("client", "headless"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            found += offences(path.read_text(), str(path.relative_to(ROOT)))
    assert not found, "decide by the notice's type (headless/notices.py), not its words:\n" + "\n".join(found)


def test_the_scan_finds_the_shapes_it_forbids():
    # the two lines issue #23 quotes, and their cousins; a .text shown or split is fine
    bad = ['if n.kind == "connection" and "lost" in n.text: pass',
           'if n.text.startswith("the timer played for you"): pass',
           'ok = n.text == "bye"',
           'import re\nhit = re.search("lost", n.text)',
           'if note.kind in ("info", "error"): pass',
           'k = n.kind\nif k == "over": pass']
    for source in bad:
        assert offences(source), source
    fine = ['self.line(n.kind, n.text)', 'for line in n.text.splitlines(): pass',
            'if isinstance(n, notices.TimerPlayed): show(n.text)', 'if kind == "text/plain": pass']
    for source in fine:
        assert not offences(source), source
