"""Rows the ORM makes expensive: one row read by a unique key, many rows inserted, or many rows'
columns saved by primary key, at once."""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.db import connections, models, router
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.models.signals import post_save

logger = logging.getLogger(__name__)

_Row = TypeVar("_Row")


def one_row(queryset: models.QuerySet[Any, _Row]) -> _Row | None:
    """The one row ``queryset`` holds (filtered on a unique key), or None. Sliced with no
    ordering: the model's default one would join and sort its related tables, and ``first()``
    orders by key, whose compiling was a third of a one-row query's CPU on a phone's request."""
    found = queryset.order_by()[:1]
    return found[0] if found else None


def integer_range(field: models.IntegerField) -> tuple[int, int]:
    """The whole numbers an integer ``field`` keeps on every database (a small integer is
    0–32767 or −32768–32767). PostgreSQL refuses a number out of its column's range as the row
    is written; SQLite keeps it: checking against this range gives one answer on both."""
    return BaseDatabaseOperations.integer_field_ranges[field.get_internal_type()]


def unkeepable(obj) -> list:
    """The integer and text fields of ``obj`` whose value its column cannot keep on every
    database: an integer out of :func:`integer_range`, a text longer than ``max_length``, or a
    value that is neither. Judged on the value as the field sends it (``40000.0`` is sent as
    40000, ``10**200`` as 201 characters). For rows written from outside data without
    ``full_clean`` (whose checks of relations cost a query each)."""
    wrong = []
    for field in obj._meta.concrete_fields:
        value = getattr(obj, field.attname)
        if value is None or not isinstance(field, models.IntegerField | models.CharField):
            continue
        try:
            sent = field.get_prep_value(value)
        except (TypeError, ValueError):
            wrong.append(field)
            continue
        if isinstance(field, models.IntegerField):
            low, high = integer_range(field)
            if not low <= sent <= high:
                wrong.append(field)
        elif field.max_length is not None and len(sent) > field.max_length:
            wrong.append(field)
    return wrong


def update_each(objects, fields) -> int:
    """Save ``fields`` of every object by primary key, in one statement.

    On PostgreSQL one ``UPDATE … FROM unnest(…)``, one array per column sent in binary apart
    from the text: parsed and planned once for the whole batch, where one ``UPDATE … WHERE pk =
    %s`` per row was planned again for every row, and where a ``VALUES`` list with every value
    quoted into the text (as Django's cursors send them) cost both sides more CPU than the
    write itself. Elsewhere those single-row statements by ``executemany``. Django's
    ``bulk_update`` compiles one ``CASE WHEN`` per field over every row, which cost a verified
    record more CPU than the rest of its write. Like ``bulk_update``: no ``save()``, no signals,
    no ``auto_now`` (callers set such fields themselves). An object given twice is saved as it
    is the last time.
    """
    latest = {obj.pk: obj for obj in objects}
    if not latest:
        return 0
    model = type(next(iter(latest.values())))
    meta = model._meta
    connection = connections[router.db_for_write(model)]
    columns = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    rows = [
        [meta.pk.get_db_prep_save(obj.pk, connection)]
        + [field.get_db_prep_save(getattr(obj, field.attname), connection) for field in columns]
        for obj in latest.values()
    ]
    table = quote(meta.db_table)
    if connection.vendor == "postgresql":
        # one array per column (``%b``: binary, a JSON text is not escaped character by
        # character), cast to its column's type; the text is the same for any number of rows
        arrays = ", ".join(
            f"%b::{field.db_type(connection).split('(')[0]}[]" for field in [meta.pk, *columns]
        )
        names = ", ".join(quote(field.column) for field in [meta.pk, *columns])
        assignments = ", ".join(
            f"{quote(field.column)} = new.{quote(field.column)}" for field in columns
        )
        sql = (
            f"UPDATE {table} SET {assignments} FROM unnest({arrays}) AS new ({names}) "
            f"WHERE {table}.{quote(meta.pk.column)} = new.{quote(meta.pk.column)}"
        )
        with _binding_cursor(connection) as cursor:
            cursor.execute(sql, [list(values) for values in zip(*rows, strict=True)])
    else:
        assignments = ", ".join(f"{quote(field.column)} = %s" for field in columns)
        sql = f"UPDATE {table} SET {assignments} WHERE {quote(meta.pk.column)} = %s"
        with connection.cursor() as cursor:
            cursor.executemany(sql, [row[1:] + row[:1] for row in rows])
    logger.debug("updated %d %s rows (%s)", len(rows), meta.label, ", ".join(fields))
    return len(rows)


@contextmanager
def _binding_cursor(connection) -> Iterator:
    """A cursor that sends the values apart from the SQL text (server-side binding).

    Django's cursors on psycopg bind on the client: every value is quoted into the text, and
    PostgreSQL parses it back as a constant. In the long statements of a batch (a value per row
    and column) the quoting and the parsing back cost both sides more CPU than the write."""
    import psycopg  # only ever imported for a PostgreSQL connection

    connection.ensure_connection()
    connection.validate_thread_sharing()
    with connection.wrap_database_errors:
        raw = psycopg.Cursor(connection.connection)
    cursor = (
        connection.make_debug_cursor(raw)
        if connection.queries_logged
        else connection.make_cursor(raw)
    )
    with cursor:
        yield cursor


def insert_many(model, fields, values) -> int:
    """Insert rows given as plain tuples (``fields`` order), in one statement.

    PostgreSQL gets a ``COPY … FROM STDIN``: no model instance per row and no SQL text per
    value, where ``bulk_create`` spent more of a verified record's CPU than the rules engine on
    its deal rows. Elsewhere (the embedded SQLite) it is ``bulk_create``. Either way: no keys
    returned, no ``save()``, no signals, no ``auto_now``, no defaults; every column is given.
    """
    values = list(values)
    if not values:
        return 0
    meta = model._meta
    connection = connections[router.db_for_write(model)]
    columns = [meta.get_field(name) for name in fields]
    if connection.vendor != "postgresql":
        names = [field.attname for field in columns]
        model.objects.bulk_create([model(**dict(zip(names, row, strict=True))) for row in values])
        return len(values)
    # Only the columns whose Python value is not what psycopg sends as is (JSON) are prepared.
    prepared = [i for i, field in enumerate(columns) if field.get_internal_type() == "JSONField"]
    if prepared:
        values = [list(row) for row in values]
        for row in values:
            for i in prepared:
                row[i] = columns[i].get_db_prep_save(row[i], connection)
    _copy(connection, meta, columns, values)
    return len(values)


def _copy(connection, meta, columns, values) -> None:
    """``COPY`` rows of values ready for psycopg into ``meta``'s table."""
    quote = connection.ops.quote_name
    sql = (
        f"COPY {quote(meta.db_table)} ({', '.join(quote(field.column) for field in columns)}) "
        "FROM STDIN"
    )
    # psycopg's copy() is not one of the cursor methods Django translates the errors of: without
    # this a database error here would escape ``except django.db.OperationalError`` and the like
    with connection.wrap_database_errors, connection.cursor() as cursor, cursor.copy(sql) as copy:
        for row in values:
            copy.write_row(row)
    logger.debug("inserted %d %s rows", len(values), meta.label)


def create_many(objects: list) -> list:
    """Insert model instances (one model) and give them their primary keys, like
    ``bulk_create`` without its per-value SQL.

    On PostgreSQL the keys come from the table's sequence in one query and the rows go in by
    ``COPY``, as in :func:`insert_many`. Django's ``bulk_create`` sends each column as one array
    (``UNNEST``), and psycopg escapes an array of JSON texts quote by quote in Python: a sixth
    of a verified batch's CPU went on its versions' sheets. Fields' ``pre_save`` runs as in
    ``bulk_create`` (``auto_now_add``); no ``save()``, no signals. Elsewhere: ``bulk_create``.
    """
    if not objects:
        return []
    model = type(objects[0])
    meta = model._meta
    connection = connections[router.db_for_write(model)]
    if connection.vendor != "postgresql":
        return model.objects.bulk_create(objects)
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [quote(meta.db_table), meta.pk.column, len(objects)],
        )
        keys = [row[0] for row in cursor.fetchall()]
    fields = meta.concrete_fields
    for obj, key in zip(objects, keys, strict=True):
        obj.pk = key
    _copy(
        connection,
        meta,
        fields,
        [
            [field.get_db_prep_save(field.pre_save(obj, True), connection) for field in fields]
            for obj in objects
        ],
    )
    for obj in objects:
        obj._state.adding = False
        obj._state.db = connection.alias
    return objects


def send_saved(objects, *, created: bool, update_fields=None) -> None:
    """``post_save`` for objects written by :func:`create_many` or :func:`update_each`, which
    send none, as ``save()`` would have sent it: for callers whose listeners must hear of a
    bulk write (the desk's live page), usually once per tournament rather than per row."""
    for obj in objects:
        post_save.send(
            sender=type(obj),
            instance=obj,
            created=created,
            update_fields=update_fields,
            raw=False,
            using=obj._state.db or "default",
        )
