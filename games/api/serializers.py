"""How a submission looks through the API: its state, the verifier's verdict, the mismatches."""

from django.urls import reverse
from django.utils.translation import get_language
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from games.models import Submission


class SubmissionSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    # DRF's metaclass takes declared fields off the class: ``Serializer.errors`` stays as it is.
    errors = serializers.SerializerMethodField()  # type: ignore[assignment]
    declared_mismatches = serializers.SerializerMethodField()
    submitter = serializers.CharField(source="submitter.username", default=None, read_only=True)
    is_standing = serializers.BooleanField(read_only=True)
    needs_decision = serializers.BooleanField(read_only=True)
    result_version = serializers.SerializerMethodField()

    class Meta:
        model = Submission
        fields = [
            "id",
            "url",
            "match",
            "version",
            "state",
            "is_standing",
            "needs_decision",
            "result_version",
            "has_mismatches",
            "content_hash",
            "submitter",
            "source",
            "submitted_at",
            "verified_at",
            "attempts",
            "errors",
            "declared_mismatches",
            "error_reason",
            "verdict",
        ]
        read_only_fields = fields

    def get_url(self, obj) -> str:
        path = reverse("submission-detail", kwargs={"pk": obj.pk})
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path

    @extend_schema_field({"type": "array", "items": {"type": "object"}})
    def get_errors(self, obj):
        """The verifier's errors in the request's language (Italian or English)."""
        verdict = obj.verdict or {}
        if (get_language() or "it").startswith("en") and "errors_en" in verdict:
            return verdict["errors_en"]
        return verdict.get("errors") or []

    @extend_schema_field({"type": "object", "nullable": True})
    def get_result_version(self, obj):
        """The version of the match's result this record became (number, status), if any."""
        return obj.latest_result_version

    @extend_schema_field({"type": "array", "items": {"type": "object"}})
    def get_declared_mismatches(self, obj):
        return obj.declared_mismatches


class SubmissionDocumentSerializer(SubmissionSerializer):
    """With the record as it was submitted."""

    class Meta(SubmissionSerializer.Meta):
        fields = [*SubmissionSerializer.Meta.fields, "document"]
        read_only_fields = fields
