"""Signals other apps listen to (ratings, caches, live pages, webhooks, table sheets).

``results_changed`` is sent with a ``matches`` keyword argument (a list of fresh ``Match`` rows,
``round__stage__tournament`` loaded) after the transaction that stored, replaced or deleted
their results has committed, so listeners always read the new rows. A batch of results written
together (``results.written_together``: a group of verified records) sends it once, whatever
the number of results; a result written alone sends it once: listeners do their work per
tournament or per batch, not a query per match.

``results_written`` is sent with a ``match_ids`` keyword argument by the same writer for the
same results, but inside their transaction, once their rows are written (after a batch's
flush): what a listener writes then commits or rolls back with the results (the webhooks'
deliveries). Its listeners read what the transaction will commit, must not raise (a failure
of theirs is isolated in a savepoint of their own) and must not wait for anything outside the
database: the match rows stay locked until the commit.

``tournament_imported`` is sent with a ``tournament`` keyword argument after the transaction
that imported a whole tournament from a federation file committed: its results were written
without announcing them one by one (``results.written_together(announce=False)``), and they may
be older than results already here (the ratings replay from its start date).
"""

from collections.abc import Callable
from functools import partial
from typing import Any

from django.db import transaction
from django.dispatch import Signal

results_changed = Signal()
results_written = Signal()
tournament_imported = Signal()


def on_commit_once(func: Callable[..., object], *args: object) -> None:
    """``transaction.on_commit(partial(func, *args))``, unless the same call is already queued
    in this transaction: a players' step logs two or three change-log entries, and each asked
    the pages' stamp to be forgotten and the desk to be told, the same thing three times after
    one commit. A queued callback still in the list runs whenever this one would (a savepoint
    rolled back takes its own callbacks out; one still open encloses this call too)."""
    connection = transaction.get_connection()
    if connection.in_atomic_block:
        scope = _own_scope(connection)
        for sids, queued, *_robust in connection.run_on_commit:
            if (
                scope is not False
                and (scope is None or scope in sids)
                and isinstance(queued, partial)
                and queued.func == func
                and queued.args == args
                and not queued.keywords
            ):
                return
    transaction.on_commit(partial(func, *args))


def _own_scope(connection: Any) -> str | bool | None:
    """Which queued callbacks belong to this transaction: all of them (None), those queued
    inside the savepoint a test's transaction opened for it (its id: a test case's own
    transaction holds callbacks that never run), or none we can tell apart (False)."""
    blocks = connection.atomic_blocks
    first = next((i for i, block in enumerate(blocks) if not block._from_testcase), None)
    if first is None:
        return False
    if first == 0:
        return None
    sid = connection.savepoint_ids[first - 1]
    return sid if sid is not None else False
