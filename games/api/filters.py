"""Filters of the submission list."""

import django_filters

from games.models import Submission
from tournaments.api.filters import IdFilter


class SubmissionFilter(django_filters.FilterSet):
    tournament = IdFilter(field_name="match__round__stage__tournament")

    class Meta:
        model = Submission
        fields = ["match", "state", "is_standing", "needs_decision", "has_mismatches"]
