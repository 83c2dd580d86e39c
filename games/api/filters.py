"""Filters of the submission list."""

import django_filters

from games.models import Submission


class SubmissionFilter(django_filters.FilterSet):
    tournament = django_filters.NumberFilter(field_name="match__round__stage__tournament")

    class Meta:
        model = Submission
        fields = ["match", "state", "is_standing", "needs_decision", "has_mismatches"]
