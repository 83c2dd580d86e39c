"""Filters of the submission list."""

import django_filters

from games.models import Submission
from tournaments.api.filters import IdFilter


class SubmissionFilter(django_filters.FilterSet):
    tournament = IdFilter(field_name="match__round__stage__tournament")
    is_standing = django_filters.BooleanFilter(method="filter_is_standing")
    needs_decision = django_filters.BooleanFilter(method="filter_needs_decision")

    class Meta:
        model = Submission
        fields = ["match", "state", "has_mismatches"]

    def filter_is_standing(self, queryset, name, value):
        """Read from the record's result version (the one in force), never stored twice."""
        standing = Submission.objects.standing().values("pk")
        return queryset.filter(pk__in=standing) if value else queryset.exclude(pk__in=standing)

    def filter_needs_decision(self, queryset, name, value):
        waiting = Submission.objects.awaiting_decision().values("pk")
        return queryset.filter(pk__in=waiting) if value else queryset.exclude(pk__in=waiting)
