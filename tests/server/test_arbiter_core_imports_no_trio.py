"""The arbiter's pure core imports no trio (issue #23; docs/ARCHITECTURE.md, "The
arbiter: pure core, thin shell"): its modules, and everything they import, load in a
fresh interpreter without trio coming in. Time reaches the core only as ``now``."""

from __future__ import annotations

import subprocess
import sys

CORE = ("wildtable.server.arbiter", "wildtable.server.arbiter_io", "wildtable.server.arbiter_seats", "wildtable.server.fairhold",
        "wildtable.server.refusals", "wildtable.server.shuffle")


def test_the_core_loads_without_trio():
    code = ("import sys\n"
            + "".join(f"import {name}\n" for name in CORE)
            + "print(sorted(m for m in sys.modules if m == 'trio' or m.startswith('trio.')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"the arbiter's core imports trio: {done.stdout.strip()}"
