"""The thin layer between the ORM and the pure algorithms, one module per job.

Each function reads rows, calls ``tournaments.algorithms`` and writes what comes back, inside a
transaction; refusals are :mod:`tournaments.exceptions` errors with a translated message.
"""
