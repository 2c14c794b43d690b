"""Our Textual classes define no method under a name Textual's own base classes use.
PlayApp had a ``_log(text, style)``, which shadowed ``App._log(group, verbosity, frame,
*objects)``: Textual routes every ``app.log(...)`` through it, so with the devtools
console connected each of Textual's own log calls raised TypeError. (mypy found it:
"Signature of _log incompatible with supertype App".)"""

from __future__ import annotations

import inspect

import wildtable.client.tui as tui
import wildtable.client.viewer as viewer


def shadowed(module) -> list[str]:
    out = []
    for cls in vars(module).values():
        if not (inspect.isclass(cls) and cls.__module__ == module.__name__):
            continue
        theirs = [b for b in cls.__mro__[1:] if b.__module__.split(".")[0] == "textual"]
        for name, value in vars(cls).items():
            if inspect.isfunction(value) and not name.startswith("__") \
                    and any(name in vars(b) for b in theirs) and not _documented_hook(name):
                out.append(f"{cls.__name__}.{name}")
    return out


def _documented_hook(name: str) -> bool:
    """Textual's public hooks are meant to be overridden: compose, on_mount, action_*, ..."""
    return not name.startswith("_")


def test_no_textual_private_method_is_shadowed():
    assert shadowed(tui) == []
    assert shadowed(viewer) == []


def test_the_check_sees_a_shadowing_method():
    class Probe(tui.PlayApp):
        def _log(self, text: str, style: str = "") -> None:      # what PlayApp had
            pass

    import types
    mod = types.ModuleType("probe")
    Probe.__module__ = "probe"
    mod.Probe = Probe
    assert "Probe._log" in shadowed(mod)
