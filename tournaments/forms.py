"""The admin's forms for its tournament and stage actions (results are entered on the desk)."""

from __future__ import annotations

import datetime
from typing import cast

from django import forms
from django.utils.translation import gettext_lazy as _


class PresetTournamentForm(forms.Form):
    preset = forms.ChoiceField(label=_("preset"))
    name = forms.CharField(label=_("name"), max_length=200)
    slug = forms.SlugField(
        label=_("slug"), required=False, help_text=_("Leave empty to derive it from the name.")
    )
    start_date = forms.DateField(label=_("start date"), initial=datetime.date.today)
    end_date = forms.DateField(label=_("end date"), required=False)
    venue = forms.CharField(label=_("venue"), max_length=200, required=False)
    is_public = forms.BooleanField(label=_("public"), required=False, initial=True)
    with_groups = forms.BooleanField(
        label=_("round-robin groups stage"), required=False, initial=True
    )
    double_round_robin = forms.BooleanField(label=_("double round robin"), required=False)
    with_knockout = forms.BooleanField(label=_("knock-out stage"), required=False, initial=True)
    third_place_match = forms.BooleanField(
        label=_("third-place match"), required=False, initial=True
    )

    def __init__(self, *args, **kwargs):
        from tournaments.services.presets import preset_choices

        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["preset"]).choices = preset_choices()

    def clean_slug(self):
        from tournaments.models import Tournament

        slug = self.cleaned_data.get("slug")
        if slug and Tournament.objects.filter(slug=slug).exists():
            raise forms.ValidationError(_("A tournament with this slug already exists."))
        return slug

    def clean(self):
        super().clean()
        data = self.cleaned_data
        if (
            data.get("end_date")
            and data.get("start_date")
            and data["end_date"] < data["start_date"]
        ):
            self.add_error("end_date", _("The tournament cannot end before it starts."))
        return data

    def stages(self):
        data = self.cleaned_data
        stages = []
        if data.get("with_groups"):
            stages.append(
                {
                    "name": str(_("Groups")),
                    "kind": "round_robin",
                    "double_round_robin": data.get("double_round_robin", False),
                }
            )
        if data.get("with_knockout"):
            stages.append(
                {
                    "name": str(_("Knock-out")),
                    "kind": "knockout",
                    "third_place_match": data.get("third_place_match", False),
                }
            )
        return stages


class LineImportForm(forms.Form):
    file = forms.FileField(
        label=_("CSV file"),
        help_text=_(
            "Columns: line, player 1, player 2, player 3, federation id 1, federation id 2, "
            "federation id 3, club, city, seed (a header row is required; comma or semicolon)."
        ),
    )


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
