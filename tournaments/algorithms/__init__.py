"""Pure tournament algorithms: plain functions over plain data, no ORM and no Django import.

The ORM layer (``tournaments/services``, models) loads rows, calls these functions and saves what
they return, the way Tabbycat keeps ``draw/generator/`` apart from ``draw/manager.py``. Keeping them
pure makes them testable without a database and fast enough for thousands of lines.
"""
