"""The PostgreSQL store's SQL that more than one statement or module shares: the schema
(``PgStore.ensure_schema``, server/store_calls.py), the columns added since, the row-lock
order every statement keeps, the group commit's one statement (``PgWriter``,
server/store_pg.py) and the pieces both use (how a table ended, marking tables finished).
Apart so each of those modules keeps one job; what the tables mean: server/store_pg.py's
docstring and docs/ARCHITECTURE.md, "Store".
"""

from __future__ import annotations

from .logwriter import EXPIRED, OVER


SCHEMA = (
    """CREATE TABLE IF NOT EXISTS wt_nodes (
        node_id text PRIMARY KEY,
        url text NOT NULL,
        heartbeat timestamptz NOT NULL,
        load integer NOT NULL DEFAULT 0,
        capacity integer NOT NULL,
        alive boolean NOT NULL DEFAULT true)""",
    """CREATE TABLE IF NOT EXISTS wt_tables (
        table_id text PRIMARY KEY,
        game text NOT NULL,
        owner text,
        epoch bigint NOT NULL DEFAULT 1,
        lease_until timestamptz NOT NULL,
        finished boolean NOT NULL DEFAULT false,
        entry bytea,
        bots bytea,
        created timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        ended text CHECK (ended IN ('over', 'expired')))""",
    """CREATE TABLE IF NOT EXISTS wt_records (
        table_id text NOT NULL REFERENCES wt_tables,
        n bigint NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (table_id, n))""",
    "CREATE INDEX IF NOT EXISTS wt_tables_owner ON wt_tables (owner) WHERE NOT finished",
)
# columns added since the first stores were made, (table, column, type): each is added to
# a store that lacks it, and only there (ALTER TABLE takes an ACCESS EXCLUSIVE lock even
# when the column exists, which would stall every node's commits at each node's start)
ADDED_COLUMNS = (
    ("wt_tables", "finished_at", "timestamptz"),    # when it was marked finished; NULL: before this column
    # how it ended: its game 'over', or 'expired' waiting for players (no game to replay);
    # NULL: not finished, or marked finished before this column, which counts as over
    ("wt_tables", "ended", "text CHECK (ended IN ('over', 'expired'))"),
    # the address that made it (--max-waiting-per-address: a node that adopts the table
    # counts it against that address, as its maker did); NULL: unknown, or before this column
    ("wt_tables", "creator", "text"),
)
# one schema at a time: CREATE TABLE IF NOT EXISTS run by two nodes at once can still
# collide in the catalog, so ensure_schema holds this advisory lock while it runs
SCHEMA_LOCK = 0x77746162   # "wtab"


# Every statement that locks several rows of wt_tables locks them in table_id order (the
# group commit, the renewal, the lobby entries, giving leases up): two of them that wait
# for each other's rows would deadlock, which PostgreSQL finds only after deadlock_timeout
# (1 s), a stall every player at those tables waits through, and the writer retries its
# group. A 1,000-player bench/load.py run on PostgreSQL had 4 to 8 such retries (its p99
# over a second) before; none since (tests/server/test_store_lock_order.py).
IN_ORDER = "ORDER BY table_id FOR UPDATE"

# tables marked finished (``t``, from the rows ``f`` (table_id, ended) of %(finish)s and
# %(ended)s): nobody adopts them any more; and, the first time, since when (the replay viewer
# lists the most recently finished first, and a node restarted holds its own finished tables
# again for --keep-finished from then) and how they ended (the game over, or expired waiting)
MARK_FINISHED = ("UPDATE wt_tables t SET finished = true, finished_at = coalesce(t.finished_at, clock_timestamp()), "
                  "ended = coalesce(t.ended, f.ended) "
                  "FROM unnest(%(finish)s::text[], %(ended)s::text[]) AS f(table_id, ended) "
                  "WHERE t.table_id = f.table_id")
# a finished table whose game is over, not one that expired waiting for players (those
# marked finished before wt_tables.ended was kept count as over: their replay still has to
# end the game, or the viewer refuses it)
IS_OVER = "finished AND ended IS DISTINCT FROM 'expired'"
# how a table ended, in SQL: OVER or EXPIRED, NULL while it is not finished (table_info, log_size)
HOW_ENDED = f"CASE WHEN {IS_OVER} THEN '{OVER}' WHEN finished THEN '{EXPIRED}' END"


# A first attempt at a group: one statement, committed on its own (autocommit). Its WITH
# parts run once each whatever reads them; FOR UPDATE holds the rows of the tables until
# the end, so an adoption waits for it (or it for the adoption, and then finds the epoch
# changed).
GROUP_STATEMENT = """
WITH held AS (
    SELECT t.table_id FROM wt_tables t
    JOIN unnest(%(ids)s::text[], %(epochs)s::int8[]) AS w(table_id, epoch)
      ON w.table_id = t.table_id AND w.epoch = t.epoch
    WHERE t.owner = %(me)s AND t.lease_until > clock_timestamp()
    ORDER BY t.table_id FOR UPDATE OF t),
written AS (
    INSERT INTO wt_records (table_id, n, data)
    SELECT r.table_id, r.n, r.data FROM unnest(%(t)s::text[], %(n)s::int8[], %(d)s::bytea[]) AS r(table_id, n, data)
    WHERE r.table_id IN (SELECT table_id FROM held)),
finished AS (
    """ + MARK_FINISHED + """ AND t.table_id IN (SELECT table_id FROM held))
SELECT table_id FROM held
"""
