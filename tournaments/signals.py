"""Signals other apps listen to (ratings, caches, live pages, webhooks, table sheets).

``results_changed`` is sent with a ``matches`` keyword argument (a list of fresh ``Match`` rows,
``round__stage__tournament`` loaded) after the transaction that stored, replaced or deleted
their results has committed, so listeners always read the new rows. One transaction sends it
once, whatever the number of results it wrote (a batch of verified records is one transaction):
listeners do their work per tournament or per batch, not a query per match.
"""

from django.dispatch import Signal

results_changed = Signal()
