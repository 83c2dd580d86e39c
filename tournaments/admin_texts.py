"""The admin in the product's name and in Italian that agrees in gender.

Django's generic admin messages put the model's name after a masculine article ("Aggiungi un
altro %(verbose_name)s", "Il {name} … è stato modificato"), which is wrong for "fase", "linea",
"iscrizione"… The msgids below are Django's own, listed here so makemessages keeps them in the
project's catalog; the project's Italian (locale fragments) phrases them without an article or a
gendered participle, and the project's catalog takes precedence over Django's.
"""

from django.contrib import admin
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

admin.site.site_header = _("Scopa tournaments · data repair")
admin.site.site_title = _("Scopa tournaments")
admin.site.index_title = _("Tournament data")

DJANGO_ADMIN_MSGIDS = (
    gettext_noop("Add another %(verbose_name)s"),
    gettext_noop("The {name} “{obj}” was added successfully."),
    gettext_noop("The {name} “{obj}” was changed successfully."),
    gettext_noop("The {name} “{obj}” was added successfully. You may edit it again below."),
    gettext_noop("The {name} “{obj}” was changed successfully. You may edit it again below."),
    gettext_noop("The {name} “{obj}” was added successfully. You may add another {name} below."),
    gettext_noop("The {name} “{obj}” was changed successfully. You may add another {name} below."),
    gettext_noop("The %(name)s “%(obj)s” was deleted successfully."),
    gettext_noop("Delete selected %(verbose_name_plural)s"),
    gettext_noop("Successfully deleted %(count)d %(items)s."),
    gettext_noop("Django site admin"),
    gettext_noop("Django administration"),
)
