"""django-filter filter sets: what list endpoints can be narrowed by."""

import django_filters
from django import forms
from django.db.models import Q

from tournaments.models import ID_MAX, Line, Match, Player, Round, Stage, Tournament


class IdFilter(django_filters.NumberFilter):
    """An id: a whole number in the database's range."""

    # The stubs type NumberFilter's field as a DecimalField; any forms field class is accepted.
    field_class = forms.IntegerField  # type: ignore[assignment]

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", -ID_MAX)
        kwargs.setdefault("max_value", ID_MAX)
        super().__init__(*args, **kwargs)


class TournamentFilter(django_filters.FilterSet):
    started_after = django_filters.DateFilter(field_name="start_date", lookup_expr="gte")
    started_before = django_filters.DateFilter(field_name="start_date", lookup_expr="lte")
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Tournament
        fields = ["slug", "status", "variant", "is_public", "seats_per_line"]


class StageFilter(django_filters.FilterSet):
    class Meta:
        model = Stage
        fields = ["tournament", "kind", "status"]


class RoundFilter(django_filters.FilterSet):
    tournament = IdFilter(field_name="stage__tournament")

    class Meta:
        model = Round
        fields = ["stage", "number"]


class MatchFilter(django_filters.FilterSet):
    tournament = IdFilter(field_name="round__stage__tournament")
    stage = IdFilter(field_name="round__stage")
    line = IdFilter(method="filter_line", label="line")

    class Meta:
        model = Match
        fields = ["round", "group", "status", "outcome", "table_number"]

    def filter_line(self, queryset, name, value):
        return queryset.filter(Q(home=value) | Q(away=value))


class LineFilter(django_filters.FilterSet):
    tournament = IdFilter(field_name="entries__tournament")
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Line
        fields: list[str] = []


class PlayerFilter(django_filters.FilterSet):
    tournament = IdFilter(field_name="lines__entries__tournament")
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Player
        fields = ["federation_id", "club", "city"]
