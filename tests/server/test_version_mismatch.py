"""Every `hello.version` other than ours gets `version_mismatch` (naming both versions,
saying which side is older, `ref` "hello"), then a close with 1008 (docs/PROTOCOL.md,
"Connection lifetime"). Raw msgpack frames over a real socket, read with a raw wsproto
parser, so the test sees the server's frames as they are."""

from __future__ import annotations

import msgpack
import pytest
import trio
from wsproto.events import BytesMessage, CloseConnection

from wildtable.protocol import messages as m

from rawclient import RawClient
from serverkit import running_server

OURS = m.PROTOCOL_VERSION


async def _hello_with(port: int, version) -> tuple[m.Error, CloseConnection]:
    raw = await RawClient.open(port)
    try:
        frame = msgpack.packb({"type": "hello", "version": version, "name": "ann"}, use_bin_type=True)
        await raw.stream.send_all(raw.ws.send(BytesMessage(frame)))
        first = await raw.event()
        assert isinstance(first, bytes), f"version {version}: {first!r} before any answer"
        error = m.decode(first)
        close = await raw.event()
        assert isinstance(close, CloseConnection), f"version {version}: {close!r} instead of the close"
        await raw.stream.send_all(raw.ws.send(close.response()))
        return error, close
    finally:
        await raw.stream.aclose()


async def _mismatch(tmp_path, version) -> m.Error:
    """The error a hello of ``version`` gets, checked for what every mismatch must have."""
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            error, close = await _hello_with(int(url.rsplit(":", 1)[1]), version)
    assert isinstance(error, m.Error) and error.code == "version_mismatch", error
    assert error.ref == "hello" and error.path == "$.version", error
    assert f"version {OURS}" in error.message and str(version) in error.message, error.message
    assert close.code == 1008, close
    return error


@pytest.mark.parametrize("version", [0, -1, -(2**63)])
async def test_an_older_version_is_told_to_upgrade_the_client(tmp_path, version):
    assert "upgrade the client" in (await _mismatch(tmp_path, version)).message


@pytest.mark.parametrize("version", [OURS + 1, 2**40, 2**53 + 1, 2**64 - 1])
async def test_a_newer_version_is_told_the_server_is_older(tmp_path, version):
    text = (await _mismatch(tmp_path, version)).message
    assert "server is older" in text or "older than the client" in text, text
    assert "upgrade the client" not in text, text


async def test_our_version_is_welcome(tmp_path):
    """The control: the same raw hello with our version is answered with welcome."""
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            raw = await RawClient.open(int(url.rsplit(":", 1)[1]))
            try:
                frame = msgpack.packb({"type": "hello", "version": OURS, "name": "ann"}, use_bin_type=True)
                await raw.stream.send_all(raw.ws.send(BytesMessage(frame)))
                assert isinstance(await raw.message(), m.Welcome)
            finally:
                await raw.stream.aclose()


async def test_a_newer_hello_with_fields_we_do_not_know_is_still_a_version_mismatch(tmp_path):
    """A newer client's hello may carry fields this version does not know: the version
    decides (version_mismatch, not unknown_field), so the client hears what to do."""
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            raw = await RawClient.open(int(url.rsplit(":", 1)[1]))
            try:
                frame = msgpack.packb({"type": "hello", "version": OURS + 1, "name": "ann", "avatar": "cat"},
                                      use_bin_type=True)
                await raw.stream.send_all(raw.ws.send(BytesMessage(frame)))
                error = m.decode(await raw.event())
                close = await raw.event()
            finally:
                await raw.stream.aclose()
    assert isinstance(error, m.Error) and error.code == "version_mismatch" and error.ref == "hello", error
    assert "server is older" in error.message or "older than the client" in error.message, error.message
    assert isinstance(close, CloseConnection) and close.code == 1008, close


async def test_our_version_with_a_field_we_do_not_know_is_unknown_field(tmp_path):
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            raw = await RawClient.open(int(url.rsplit(":", 1)[1]))
            try:
                frame = msgpack.packb({"type": "hello", "version": OURS, "name": "ann", "avatar": "cat"},
                                      use_bin_type=True)
                await raw.stream.send_all(raw.ws.send(BytesMessage(frame)))
                error = m.decode(await raw.event())
            finally:
                await raw.stream.aclose()
    assert isinstance(error, m.Error) and error.code == "unknown_field" and error.path == "$.avatar", error
