"""A page with nothing to say stays connected: the server closes a connection that sends
no message for 600 s (server/connection.py IDLE_TIMEOUT; WebSocket pings do not count,
and a page cannot send one), so a page that is silent for KEEPALIVE_MS (web/app/net.js,
240 s) sends list_tables, as the terminal client does. Found: the browser client sent
nothing while it sat at a table without acting (waiting for a table to fill, for a long
turn, or watching), so the server dropped it every ten minutes ("connection lost (1001:
idle timeout)", a fresh snapshot on the rejoin).

The page's clock is Playwright's fake one (its timers and performance.now run as the test
says; the server's and the socket are real): a simulated half hour at the table, and no
gap between two messages the page sent as long as the server's idle timeout."""

from __future__ import annotations

from wildtable.server.connection import IDLE_TIMEOUT

RECORD_SENDS = """
(() => {
  window.__sent = [];
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    window.__sent.push(performance.now());
    return send.call(this, data);
  };
})();
"""


def test_a_page_silent_at_a_table_sends_a_message_before_the_idle_timeout(players, web_server):
    p = players("ann")
    p.page.add_init_script(RECORD_SENDS)
    p.page.clock.install()
    p.open().enter("ann")
    table = p.create("go-wild", 2, turn_timer=0)        # waiting for a second player who never comes
    start = p.page.evaluate("() => performance.now()")
    minutes = 30
    for _ in range(minutes):
        p.page.clock.run_for(60_000)
    end = p.page.evaluate("() => performance.now()")
    assert end - start >= minutes * 60_000
    sent = [t for t in p.page.evaluate("() => window.__sent") if t >= start - IDLE_TIMEOUT * 1000]
    times = sorted(sent) + [end]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert len(sent) >= minutes * 60 / 240 - 1, sent
    assert max(gaps) < IDLE_TIMEOUT * 1000, f"the page was silent for {max(gaps) / 1000:.0f} s: {sent}"
    assert p.page.evaluate("() => window.wildtable.conn.ready") and p.table_id() == table
