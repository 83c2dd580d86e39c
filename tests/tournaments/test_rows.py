"""``tournaments.services.rows.create_many``: the batch writer's inserts of model instances
(result versions, change-log rows, submissions) give every instance its key and store exactly
what ``save()`` would, without Django's one-array-per-column insert."""

from datetime import timedelta

import pytest
from django.db.models import JSONField, Value

from tests.api import factories
from tournaments.models import ResultVersion
from tournaments.services import rows

pytestmark = pytest.mark.django_db


def versions(match, sheets):
    return [
        ResultVersion(
            match=match,
            number=number,
            source="desk",
            status=ResultVersion.Status.SUPERSEDED,
            sheet=sheet,
            reason=f'v{number} "quoted" \\ back\tslash',
        )
        for number, sheet in enumerate(sheets, start=1)
    ]


def test_instances_get_their_keys_and_the_rows_hold_what_save_would_store():
    match = factories.matches(factories.tournament(lines=4))[0]
    sheets = [
        {"deals": [{"points": [3, 1], "note": 'say "scopa"\n\\'}], "outcome": "normal"},
        None,  # a deletion: SQL NULL, not JSON null
        {"deals": [], "ünïcode": "€ — è"},
    ]
    made = rows.create_many(versions(match, sheets))
    saved = versions(match, sheets)
    for version in saved:
        version.number += 10
        version.save()
    assert [v.pk for v in made] == sorted(v.pk for v in made)
    assert all(not v._state.adding for v in made)
    stored = {v.pk: v for v in ResultVersion.objects.filter(match=match)}
    for version, twin in zip(made, saved, strict=True):
        row = stored[version.pk]
        assert row.sheet == twin.sheet == version.sheet
        assert row.reason == twin.reason
        assert row.created_at is not None and row.created_at == version.created_at
    null_sheets = ResultVersion.objects.filter(match=match, sheet__isnull=True)
    assert sorted(null_sheets.values_list("number", flat=True)) == [2, 12]


def test_update_each_saves_the_fields_of_every_object_the_last_copy_winning():
    match = factories.matches(factories.tournament(lines=4))[0]
    made = rows.create_many(versions(match, [{"deals": [1]}, {"deals": [2]}, None]))
    first, second, third = (ResultVersion.objects.get(pk=v.pk) for v in made)
    first.status, first.sheet = ResultVersion.Status.IN_FORCE, None
    second.sheet, second.reason = {"it's": 'a "quote"'}, "ok"
    third.sheet = {"deals": [3]}
    again = ResultVersion.objects.get(pk=second.pk)
    again.reason = "the last copy"
    assert rows.update_each([first, second, third, again], ["status", "sheet", "reason"]) == 3
    stored = {v.pk: v for v in ResultVersion.objects.filter(match=match)}
    assert (stored[first.pk].status, stored[first.pk].sheet) == ("in_force", None)
    assert (stored[second.pk].sheet, stored[second.pk].reason) == ({"deals": [2]}, "the last copy")
    assert stored[third.pk].sheet == {"deals": [3]}
    assert stored[third.pk].reason == made[2].reason  # a field not named is left alone
    assert rows.update_each([], ["status"]) == 0


def test_json_values_of_every_kind_are_stored_as_save_stores_them():
    """A JSON column's value of any kind (a string with quotes and backslashes, a number, a list,
    JSON null by ``Value(None, JSONField())``) comes back as ``save()`` stores it, whether
    inserted or updated."""
    match = factories.matches(factories.tournament(lines=4))[0]
    sheets = ["a 'quoted' \"string\" \\", 7, [1, "€"], Value(None, JSONField())]
    made = rows.create_many(versions(match, sheets))
    saved = versions(match, sheets)
    for version in saved:
        version.number += 10
        version.save()

    def stored():
        found = ResultVersion.objects.filter(match=match).order_by("number")
        return [(v.number % 10, v.sheet) for v in found]

    assert (
        stored()[:4]
        == stored()[4:]
        == [
            (1, sheets[0]),
            (2, 7),
            (3, [1, "€"]),
            (4, None),
        ]
    )
    assert ResultVersion.objects.filter(match=match, sheet__isnull=True).count() == 0  # JSON null
    for version in made:
        version.sheet = {"again": version.number}
    rows.update_each(made, ["sheet"])
    again = ResultVersion.objects.filter(pk__in=[v.pk for v in made]).order_by("number")
    assert [v.sheet for v in again] == [{"again": n} for n in (1, 2, 3, 4)]


def test_update_each_sends_columns_of_nulls_keys_and_times():
    """Each column goes as one array of its type: a column of SQL NULLs only, a key to another
    row (or none), an aware time, and text PostgreSQL would have to unquote."""
    match = factories.matches(factories.tournament(lines=4))[0]
    made = rows.create_many(versions(match, [{"deals": [1]}, {"deals": [2]}]))
    when = made[0].created_at - timedelta(days=3)
    for version, reason in zip(made, ["it's \\ 'odd'", 'ünïcode € {a,b} "NULL"'], strict=True):
        version.sheet, version.based_on, version.created_at = None, made[0], when
        version.reason = reason
    made[0].based_on = None
    rows.update_each(made, ["sheet", "based_on", "created_at", "reason"])
    stored = list(ResultVersion.objects.filter(match=match).order_by("number"))
    assert [v.sheet for v in stored] == [None, None]
    assert [v.based_on_id for v in stored] == [None, made[0].pk]
    assert [v.created_at for v in stored] == [when, when]
    assert [v.reason for v in stored] == ["it's \\ 'odd'", 'ünïcode € {a,b} "NULL"']
    assert ResultVersion.objects.filter(match=match, sheet__isnull=True).count() == 2
