"""The admin's forms for its stage actions (tournaments, lines and results are run on the desk)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class CreateGroupsForm(forms.Form):
    n_groups = forms.IntegerField(label=_("number of groups"), min_value=1, max_value=512)


class CloseStageForm(forms.Form):
    per_group = forms.IntegerField(
        label=_("qualifiers per group"),
        min_value=1,
        max_value=64,
        initial=2,
        help_text=_("The top K of each group go to the next knock-out stage, crossed."),
    )
