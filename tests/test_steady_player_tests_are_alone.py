"""A test that seats hostilekit's steady player runs ``alone`` under pytest -n (it measures
how soon the server answers; tests/conftest.py), and the others of its module do not:
tests/alonekit.py finds the first kind through the helpers they call, and the player
fails a test that is seated beside others all the same."""

from __future__ import annotations

import importlib.util
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

import floodkit
import hostilekit
from alonekit import ALONE_ENV, must_be_alone, seats_steady_player
from hostilekit import steady_player, steady_player_process


def _direct(url):
    return steady_player(url)


@asynccontextmanager
async def _helper(url):
    async with hostilekit.under_attack(url):
        yield


async def _through_a_helper(url):
    async with _helper(url):
        pass


async def _through_floodkit(path):
    async with floodkit.attacked(path):
        pass


async def _through_an_inner_function(url):
    async def inner():
        async with _helper(url):
            pass
    await inner()


async def _no_player(port):
    raw = await hostilekit.said_hello(port)     # functions of the same kits, but no player seated
    await raw.send(floodkit.chunk_of(hostilekit.binary({"type": "list_tables"})))


def _recursive(n):
    return _recursive(n - 1) if n else 0


@pytest.mark.parametrize("fn", [_direct, _through_a_helper, _through_floodkit, _through_an_inner_function])
def test_a_function_reaching_the_steady_player_is_found(fn):
    assert seats_steady_player(fn)


@pytest.mark.parametrize("fn", [_no_player, _recursive, floodkit.flood_until_close, hostilekit.said_hello, len, None])
def test_a_function_that_does_not_is_not(fn):
    assert not seats_steady_player(fn)


def _module(name: str):
    """tests/server/NAME.py, loaded (under another name than pytest's)."""
    spec = importlib.util.spec_from_file_location(f"alone_{name}", Path(__file__).parent / "server" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_suites_attack_tests_are_marked_and_their_neighbours_are_not(request):
    """The modules as they are: each test that seats the player, and only those."""
    test_flood_pings, test_open_log_files = _module("test_flood_pings"), _module("test_open_log_files")

    class Item:     # what must_be_alone reads of a pytest item
        def __init__(self, module, name):
            self.module, self.function, self.fixturenames = module, getattr(module, name), ()

    assert must_be_alone(Item(test_flood_pings, "test_a_full_speed_ping_flood_is_closed_within_2_s_and_nobody_else_notices"))
    assert must_be_alone(Item(test_open_log_files, "test_under_ulimit_256_a_server_holding_500_tables_lets_clients_connect_and_play"))
    assert not must_be_alone(Item(test_open_log_files, "test_default_caps_are_lowered_to_what_the_limit_holds"))
    assert request.node.get_closest_marker("alone") is None


@pytest.mark.parametrize("seat", [steady_player, steady_player_process])
async def test_the_steady_player_seated_by_a_test_not_alone_fails_it(monkeypatch, seat):
    """What the reading of names misses, the player catches: before it connects."""
    monkeypatch.setenv(ALONE_ENV, "0")
    with pytest.raises(AssertionError, match="must be marked alone"):
        async with seat("ws://127.0.0.1:9"):
            pass
