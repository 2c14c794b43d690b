"""`wildtable serve --max-fragments`: the cap on the frames of one client message
(docs/PROTOCOL.md, "Connection lifetime" 5) is a count of 1 or more; anything else is
refused with a sentence before anything starts, and --help says the default."""

from __future__ import annotations

import subprocess
import sys

import pytest

from test_serve_cli_errors import refused


@pytest.mark.parametrize("value", ["0", "-3"])
async def test_max_fragments_below_1_is_refused(tmp_path, value):
    code, line = await refused(tmp_path, "--port", "0", "--max-fragments", value)
    assert (code, line) == (2, "wildtable serve: --max-fragments wants a count, 1 or more")
    assert not (tmp_path / "data").exists()


def test_help_gives_the_fragment_cap_and_the_frame_budget():
    out = subprocess.run([sys.executable, "-m", "wildtable", "serve", "--help"], capture_output=True, text=True,
                         timeout=20).stdout
    flat = " ".join(out.split())
    assert "--max-fragments N frames one client message may come in (default 64)" in flat, out
    assert "200 a second, bursts of 400" in flat, out
