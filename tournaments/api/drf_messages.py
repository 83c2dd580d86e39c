"""Django REST framework messages that its own Italian catalog leaves in English.

Listed with ``gettext_noop`` so ``makemessages`` keeps them in this project's catalog, whose
Italian translations then take precedence (``LOCALE_PATHS``) when DRF translates them. Only
messages the API can answer with are listed; the placeholders are DRF's own.
"""

from django.utils.translation import gettext_noop

MESSAGES = (
    gettext_noop("Must be a valid boolean."),
    gettext_noop("Not a valid string."),
    gettext_noop("Ensure this field has at least {min_length} elements."),
    gettext_noop("Ensure this field has no more than {max_length} elements."),
    gettext_noop("This dictionary may not be empty."),
    gettext_noop("Datetime value out of range."),
    gettext_noop("Surrogate characters are not allowed: U+{code_point:X}."),
    gettext_noop("A page number within the paginated result set."),
)
