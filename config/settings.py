"""Settings, read from the environment.

No variable is required: with none set, the project runs on a SQLite file and runs Celery tasks
eagerly. Production and CI set ``DATABASE_URL`` (PostgreSQL) and ``CELERY_BROKER_URL`` (Redis).
"""

import os
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from config.broker import amqp_options, is_amqp

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env(
    DEBUG=(bool, False),
    # The test client's "testserver" is added by the test runner itself, never here.
    ALLOWED_HOSTS=(list, ["127.0.0.1", "localhost", "[::1]"]),
    CELERY_BROKER_URL=(str, ""),
    SECRET_KEY=(str, ""),
    HTTPS=(bool, False),
)

DEBUG = env("DEBUG")

# The web servers' entry points (config/wsgi.py, config/asgi.py) say so before the settings load:
# they answer the public, so they never run on a key anyone can read here. manage.py (runserver on
# 127.0.0.1, migrate, seed_demo), the tests, the benchmarks and the workers may, so the README's
# commands need no variable; ``check --deploy`` still flags that key (its prefix).
SERVING = os.environ.get("SCOPA_ENTRY_POINT") in {"wsgi", "asgi"}
DEVELOPMENT_SECRET_KEY = "django-insecure-development-only-set-SECRET_KEY-in-production"
SECRET_KEY = env("SECRET_KEY")
# Keys retired by a rotation: sessions and signed values made with them still read (Django's).
SECRET_KEY_FALLBACKS = env.list("SECRET_KEY_FALLBACKS", default=[])
if not SECRET_KEY:
    if SERVING and not DEBUG:
        raise ImproperlyConfigured(
            "The SECRET_KEY environment variable is not set. With DEBUG off the server will not "
            "start on a known key: set SECRET_KEY to a long random string (for instance the "
            "output of `python -c 'import secrets; print(secrets.token_urlsafe(50))'`)."
        )
    SECRET_KEY = DEVELOPMENT_SECRET_KEY


def weak_secret_key(key: str) -> str:
    """Why ``key`` may not sign a public server's cookies and tokens, or "" when it may: the
    development key above is published, and a short or repetitive key is guessed (Django's own
    ``check --deploy`` rule: at least 50 characters, at least 5 different ones)."""
    if key == DEVELOPMENT_SECRET_KEY or key.startswith("django-insecure-"):
        return "it is the development key published in config/settings.py"
    if len(key) < 50:
        return f"it has {len(key)} characters, fewer than 50"
    if len(set(key)) < 5:
        return f"it has {len(set(key))} different characters, fewer than 5"
    return ""


if SERVING and not DEBUG:
    for _name, _key in [("SECRET_KEY", SECRET_KEY)] + [
        (f"SECRET_KEY_FALLBACKS[{i}]", k) for i, k in enumerate(SECRET_KEY_FALLBACKS)
    ]:
        if _why := weak_secret_key(_key):
            raise ImproperlyConfigured(
                f"{_name} is too weak for a server with DEBUG off: {_why}. Set it to a long "
                "random string (for instance the output of "
                "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`)."
            )
ALLOWED_HOSTS = env("ALLOWED_HOSTS")
# The address printed on table and line cards (docs/at-the-table.md), when the desk is opened at
# another one than the phones reach; empty: the address the desk was opened at.
PUBLIC_BASE_URL = env.str("PUBLIC_BASE_URL", default="")
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# A refused form gets a page that says what to do, in the visitor's language (public/errors.py).
CSRF_FAILURE_VIEW = "public.errors.csrf_failure"

# Served over HTTPS (behind a proxy that terminates TLS): ``HTTPS=true`` turns on everything
# ``check --deploy`` asks for. Off by default so the development server works over plain HTTP.
HTTPS = env("HTTPS")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=HTTPS)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=HTTPS)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=HTTPS)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=HTTPS)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=HTTPS)
# The header the TLS-terminating proxy sets (it must overwrite any value the client sent).
_proxy_header = env.str("SECURE_PROXY_SSL_HEADER", default="X-Forwarded-Proto" if HTTPS else "")
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _proxy_header.upper().replace("-", "_"), "https") if _proxy_header else None
)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
# Sessions read through the cache (Redis with CACHE_URL), written through to the database: a
# signed-in request costs one query less, and a cache flush or restart loses no session.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

INSTALLED_APPS = [
    # daphne first: its runserver serves HTTP and the live pages' WebSockets (config/asgi.py).
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "axes",
    "games",
    "tournaments",
    "ratings",
    "webhooks",
    "live",
    "scoresheets",
    # The top floor: pages that compose what every app above knows.
    "desk",
    "public",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
# Persistent connections (a new PostgreSQL connection costs more CPU than most requests and
# tasks), checked before each reuse so a restarted database is survived: the first query after a
# restart gets a fresh connection instead of an error. Celery workers keep them too (config.celery).
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=600))
DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {
    "default": env.cache("CACHE_URL", default="locmemcache://scopa"),
}
if CACHES["default"]["BACKEND"].endswith("LocMemCache"):
    # The pages cache one entry per match row (public/rows.py): a 500-table round is 500 rows,
    # over locmem's default of 300 entries, which would cull them as fast as they are stored.
    CACHES["default"].setdefault("OPTIONS", {}).setdefault("MAX_ENTRIES", 20000)
elif CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    CACHES["default"]["BACKEND"] = "config.cache.RedisCache"  # one client per pool, kept

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Italian first, English on a switch.
LANGUAGE_CODE = "it"
LANGUAGES = [("it", _("Italiano")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "config" / "locale"]
TIME_ZONE = "Europe/Rome"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Serve straight from the apps' static folders too, so the run command works before (or
# without) collectstatic; production runs collectstatic and whitenoise serves STATIC_ROOT.
WHITENOISE_USE_FINDERS = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if not DEBUG and env.bool("STATIC_MANIFEST", default=False)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

LOGIN_URL = "admin:login"
# After the desk's login page without ``?next``: the desk, not Django's /accounts/profile/.
LOGIN_REDIRECT_URL = "desk:home"

# --- content security policy (django-csp) -------------------------------------------------------
# No inline script, no eval, no inline style anywhere: every script is a file under static/, data
# reaches it through json_script or data- attributes. Swagger UI (/api/docs/) relaxes styles and
# images on its own URL (config/urls.py). See docs/security.md.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# --- throttling -----------------------------------------------------------------------------------
# Logins (desk and admin): django-axes counts failures per account and per address in the
# database (so it holds across workers and on SQLite); the lockout page answers 429.
AUTHENTICATION_BACKENDS = [
    "config.auth.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_LOCKOUT_CALLABLE = "config.auth.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
AXES_CLIENT_IP_CALLABLE = "config.auth.client_address"

# Celery: RabbitMQ in production (Redis with AOF is supported too); eager (in-process) when no
# broker is configured.
CELERY_TASK_ALWAYS_EAGER = not env("CELERY_BROKER_URL")
# Eager tasks never reach a broker, but Celery still opens a producer: an in-memory one.
CELERY_BROKER_URL = env("CELERY_BROKER_URL") or "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# When a pool process dies (a record that kills it, an out-of-memory kill), the worker waits this
# long for a result before the message goes back to the queue; there is no result backend, so
# Celery's 10 s only kept a slot idle (a poison record held one for 10 s a delivery).
CELERY_WORKER_LOST_WAIT = env.float("CELERY_WORKER_LOST_WAIT", default=1.0)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
# A broker that does not answer must not hold up a submission's 202 (it stays pending for the
# sweep): connecting gives up after a few seconds.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600, "socket_connect_timeout": 5}
if is_amqp(CELERY_BROKER_URL):
    # RabbitMQ, the production broker (docs/operations.md); see config.broker.
    for _name, _value in amqp_options().items():
        globals()[f"CELERY_{_name.upper()}"] = _value
CELERY_TIMEZONE = TIME_ZONE

# Live pages: WebSockets through Django Channels. A Redis channel layer when CHANNEL_LAYER_URL
# (or REDIS_URL) is set, so every process reaches every socket; in memory otherwise (one process,
# the embedded default).
CHANNEL_LAYER_URL = env("CHANNEL_LAYER_URL", default="") or env("REDIS_URL", default="")
# redis-py 8 reads with a 5 s socket timeout by default, the same 5 s that channels_redis blocks
# waiting for a message: every idle socket's consumer then died with a TimeoutError (and its page
# reconnected). Reads wait longer than the layer's blocking pop. redis-py 8's pool also refuses
# (instead of waiting) past 100 connections in use, which a room of phones reconnecting or
# leaving at once exceeds (bench/push.py: 2,000 sockets closing); Redis itself allows 10,000.
CHANNEL_LAYER_HOST = {"address": CHANNEL_LAYER_URL, "socket_timeout": 30, "max_connections": 2000}
CHANNEL_LAYERS = {
    "default": (
        {
            "BACKEND": env(
                "CHANNEL_LAYER_BACKEND", default="channels_redis.core.RedisChannelLayer"
            ),
            "CONFIG": {"hosts": [CHANNEL_LAYER_HOST], "prefix": "scopa-live"},
        }
        if CHANNEL_LAYER_URL
        else {"BACKEND": "channels.layers.InMemoryChannelLayer"}
    )
}
# The public pages' messages encoded once and written by each push process to its own sockets
# (live/broadcast.py); off, they go one socket at a time through the channel layer's group_send
# (bench/fanout.py measures both).
LIVE_BROADCAST = env.bool("LIVE_BROADCAST", default=True)

# Webhooks (docs/webhooks.md). Receivers on private, loopback or link-local addresses are
# refused unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is set (a test rig, a receiver on the same host).
WEBHOOK_ALLOW_PRIVATE_NETWORKS = env.bool("WEBHOOK_ALLOW_PRIVATE_NETWORKS", default=False)
WEBHOOK_TIMEOUT_S = env.float("WEBHOOK_TIMEOUT_S", default=5.0)
# Records a verification task takes at once (its own and those waiting): games.services.
GAMES_VERIFY_BATCH_SIZE = env.int("GAMES_VERIFY_BATCH_SIZE", default=50)
# Records a wake-up's worker claims at a time (records submitted alone): games.services.batches.
GAMES_WAKE_BATCH_SIZE = env.int("GAMES_WAKE_BATCH_SIZE", default=4 * GAMES_VERIFY_BATCH_SIZE)
WEBHOOK_MAX_ATTEMPTS = env.int("WEBHOOK_MAX_ATTEMPTS", default=8)
WEBHOOK_RETRY_BASE_S = env.float("WEBHOOK_RETRY_BASE_S", default=30.0)
WEBHOOK_RETRY_MAX_S = env.float("WEBHOOK_RETRY_MAX_S", default=3600.0)
# A delivery with no attempt this long after it was queued (or after its retry was due) lost its
# broker message: the beat sweep (webhooks.tasks.sweep_stuck) queues it again.
WEBHOOK_STUCK_AFTER_S = env.float("WEBHOOK_STUCK_AFTER_S", default=300.0)
# With eager Celery (no broker) a delivery gets one attempt: retrying in-process would hold up
# the request that caused the event.
WEBHOOK_RETRY_EAGER = env.bool("WEBHOOK_RETRY_EAGER", default=False)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "tournaments.api.renderers.CSPBrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "tournaments.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Scoped throttles (the views name their scope); counted in the default cache: locmem on
    # one process, Redis (CACHE_URL) across workers.
    # The client's address for anonymous throttles: REMOTE_ADDR, or behind the HTTPS proxy the
    # X-Forwarded-For entry it appended (never one the client wrote).
    "NUM_PROXIES": 1 if SECURE_PROXY_SSL_HEADER else 0,
    "DEFAULT_THROTTLE_RATES": {
        "record-submission": env.str("THROTTLE_RECORD_SUBMISSION", default="30/min"),
        # a batch holds up to GAMES_MAX_BATCH_RECORDS records (100)
        "record-batch": env.str("THROTTLE_RECORD_BATCH", default="10/min"),
        "export": env.str("THROTTLE_EXPORT", default="60/min"),
        # per private link at the table (scoresheets/views.py): a phone typing a sheet checks
        # it every few seconds
        "table-link": env.str("THROTTLE_TABLE_LINK", default="120/min"),
        # unknown tokens per client address (scoresheets/views.py): a printed QR code never
        # misses, a guesser always does; then every /p/ page answers 429 to that address
        "table-link-miss": env.str("THROTTLE_TABLE_LINK_MISSES", default="20/hour"),
    },
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Scopa tournaments API",
    "DESCRIPTION": "Tournaments, matches, verified match records, standings and exports.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Adds the engine's scopa-match/1 record schema to the components.
    "DEFAULT_GENERATOR_CLASS": "games.api.schema.RecordSchemaGenerator",
    # Swagger UI served from our own static files, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}
