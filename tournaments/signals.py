"""Signals other apps listen to (ratings, caches, live pages).

``match_result_changed`` is sent with a ``match`` keyword argument after the transaction that
stored, replaced or deleted a match's result has committed, so listeners always read the new rows.
"""

from django.dispatch import Signal

match_result_changed = Signal()
