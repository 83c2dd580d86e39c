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

from django.dispatch import Signal

results_changed = Signal()
results_written = Signal()
tournament_imported = Signal()
