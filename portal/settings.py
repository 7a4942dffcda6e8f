"""Storage Lab settings: one module, every value from the environment.

The defaults run the dev site that `make demo` brings up on one machine. A real
site sets the variables listed in the README (or in a systemd/compose env file).
"""

import ipaddress
import os
import re
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: str) -> bool:
    value = os.getenv(name, default).strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def envint(name: str, default: str) -> int:
    value = os.getenv(name, default)
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}") from None


def envlist(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.getenv(name, default).split(",") if item.strip()]


def envcommand(name: str, default: str, programs: tuple[str, ...]) -> list[str]:
    """A command line from NAME, as words: the first one of `programs` (or a path to
    one), each word plain characters only, so that a typo fails here and not in jobs."""
    value = os.getenv(name, default)
    words = value.split()
    plain = re.compile(r"^[A-Za-z0-9_./=:,+^-]+\Z")
    if (
        not words
        or words[0].rpartition("/")[2] not in programs
        or not all(plain.match(word) for word in words)
    ):
        raise ImproperlyConfigured(
            f"{name} must be {' or '.join(programs)} with its options (plain words such as "
            f"--mpi=pmix), not {value!r}"
        )
    return words


def envnetworks(
    name: str, default: str = ""
) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Addresses or networks (10.0.0.5, 192.168.0.0/24, ::1), comma-separated."""
    try:
        return [ipaddress.ip_network(item, strict=False) for item in envlist(name, default)]
    except ValueError as e:
        raise ImproperlyConfigured(f"{name}: {e}") from None


def envsecret(name: str, default: str = "") -> str:
    """A secret from NAME, or from the file named by NAME_FILE (docker secrets)."""
    path = os.getenv(f"{name}_FILE")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as e:
            raise ImproperlyConfigured(f"{name}_FILE: cannot read {path}: {e.strerror}") from None
    return os.getenv(name, default)


def with_password(url: str, password: str) -> str:
    """A redis:// URL with `password` in it (unless it names one itself)."""
    scheme, sep, rest = url.partition("://")
    if not password or not sep or "@" in rest.partition("/")[0]:
        return url
    return f"{scheme}://:{quote(password, safe='')}@{rest}"


DEBUG = envbool("DEBUG", "false")
SECRET_KEY = envsecret("SECRET_KEY")
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY (or SECRET_KEY_FILE) must be set; `make demo` makes one")
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")
SITE_NAME = os.getenv("SITE_NAME", "Storage Lab")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "axes",
    # Ours. Their layers, and so what each may import, are in portal/layers.py.
    "portal",
    "jobs",
    "exercises",  # the teaching domain's migration history, no models
    "exercises.catalogue",
    "exercises.weather",
    "exercises.quotas",
    "exercises.predictions",
    "exercises.courses",
    "exercises.advisor",
    "exercises.lab",
    "exercises.calibration",
    "jobio",
]

MIDDLEWARE = [
    # Outermost, reading nothing of the request: every answer carries the
    # Content-Security-Policy (portal/csp.py), a 413 too.
    "portal.csp.ContentSecurityPolicy",
    # First to read: a body beyond its path's limit is refused before anything reads it (the
    # CSRF check reads every POST's form).
    "portal.limits.RequestBodyLimit",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Once the user is known (after the REMOTE_USER login, inserted just above), before
    # the CSRF check reads a form (its process_view runs after every middleware's call):
    # nobody logged in sends more than a login form, unread.
    "portal.limits.AnonymousBodyLimit",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A bare 405 (require_POST) or 403 becomes the portal's page (portal/errors.py).
    "portal.errors.ErrorPages",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "portal.urls"
# A refused form is the portal's 403 page, saying what to do (handler403 and the others:
# portal/urls.py).
CSRF_FAILURE_VIEW = "portal.errors.csrf_failure"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "portal.context_processors.site",
                "exercises.quotas.context_processors.quota_alerts",
            ],
            # {% partialdef %} everywhere, as Django 6 has it built in.
            "builtins": ["template_partials.templatetags.partials"],
        },
    },
]

# Widgets drawn without a template each (portal/widgets.py): a class opens the lab at once.
FORM_RENDERER = "portal.widgets.QuickRenderer"

DATABASES = {
    "default": {
        "ENGINE": "portal.database",  # Django's, with a cheaper health check
        "NAME": os.getenv("DB_NAME", "storagelab"),
        "USER": os.getenv("DB_USER", "storagelab"),
        "PASSWORD": envsecret("DB_PASSWORD"),
        "HOST": os.getenv("DB_HOST", "127.0.0.1"),
        "PORT": os.getenv("DB_PORT", "5432"),
        "CONN_MAX_AGE": envint("DB_CONN_MAX_AGE", "60"),
        "CONN_HEALTH_CHECKS": True,
        "TEST": {"NAME": os.getenv("DB_TEST_NAME", "test_storagelab")},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The password of early dev set-ups, and of every copied example: never a site's.
DEMO_PASSWORD = "storagelab"  # noqa: S105 -- the one refused here
if DATABASES["default"]["PASSWORD"] == DEMO_PASSWORD and not DEBUG:
    raise ImproperlyConfigured(
        "DB_PASSWORD is 'storagelab', the well-known password of the demo: give the database "
        "a password of its own (DB_PASSWORD_FILE), or set DEBUG=true on a machine of your own"
    )

# Argon2id first (portal/hashers.py says why); PBKDF2 stays to read older hashes.
PASSWORD_HASHERS = [
    "portal.hashers.Argon2idHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Login attempts are throttled (django-axes): after LOGIN_FAILURE_LIMIT failures for
# one user name from one address, that pair waits LOGIN_LOCKOUT_MINUTES. By the pair,
# not the address alone: a classroom behind one NAT address must not lock out
# everyone for one trainee's typos.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = envint("LOGIN_FAILURE_LIMIT", "5")
AXES_COOLOFF_TIME = timedelta(minutes=envint("LOGIN_LOCKOUT_MINUTES", "15"))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "portal.views.locked_out"
# And per user name, from anywhere (portal/lockouts.py), so that many addresses do not
# guess one password without limit: after LOGIN_USER_FAILURE_LIMIT tries, each next
# try waits its turn, 1 s after the one before, doubling, at most
# LOGIN_USER_MAX_WAIT_SECONDS; nobody waits from where the user logged in before.
AXES_HANDLER = "portal.lockouts.LoginThrottle"
LOGIN_USER_FAILURE_LIMIT = envint("LOGIN_USER_FAILURE_LIMIT", "10")
LOGIN_USER_MAX_WAIT_SECONDS = envint("LOGIN_USER_MAX_WAIT_SECONDS", "300")
if LOGIN_USER_FAILURE_LIMIT < 1 or LOGIN_USER_MAX_WAIT_SECONDS < 1:
    raise ImproperlyConfigured(
        "LOGIN_USER_FAILURE_LIMIT and LOGIN_USER_MAX_WAIT_SECONDS must be 1 or more"
    )
# Behind the site's proxies (this many, each appending to X-Forwarded-For), the
# throttle counts the client's address, not the proxy's (portal/proxies.py), when the
# request comes from one of TRUSTED_PROXIES: a client reaching the portal directly is
# counted by its own address, whatever X-Forwarded-For it sends. By default only a
# proxy on this machine: a private network may hold the cluster's nodes, whose jobs
# would then name any address they liked. A site whose proxy is elsewhere names it;
# the web server refuses to listen beyond this machine with a proxy count and none
# named (portal/proxies.py: listening_refusal; WEB_BIND is gunicorn's GUNICORN_BIND,
# with the image's default, for `check --deploy`).
TRUSTED_PROXY_COUNT = envint("TRUSTED_PROXY_COUNT", "0")
TRUSTED_PROXIES = envnetworks("TRUSTED_PROXIES", "127.0.0.0/8, ::1")
TRUSTED_PROXIES_NAMED = bool(os.getenv("TRUSTED_PROXIES", "").strip())
WEB_BIND = envlist("GUNICORN_BIND", "0.0.0.0:8000")
AXES_CLIENT_IP_CALLABLE = "portal.proxies.client_address"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Logins: local accounts, OpenID Connect, REMOTE_USER ---
# Where people's identity comes from: local accounts only; OpenID Connect
# (portal/oidc.py); or a front end that authenticates every request and names the
# user (portal/remote_user.py). The SSO name is the cluster account, checked as any
# linked account is (portal/logins.py). The local form at /login/ stays with every
# method, for the demo and for break-glass admins.
LOGIN_METHOD = os.getenv("LOGIN_METHOD", "local").strip().lower()
if LOGIN_METHOD not in ("local", "oidc", "remote_user"):
    raise ImproperlyConfigured(
        f"LOGIN_METHOD must be local, oidc or remote_user, not {LOGIN_METHOD!r}"
    )
# django-axes counts password logins only: SSO has no password to guess here, and its
# refusals, all without a user name, would pause a classroom's shared address.
AXES_WHITELIST_CALLABLE = "portal.logins.not_a_password_login"

# OpenID Connect (mozilla-django-oidc reads these names). `manage.py oidc_endpoints
# ISSUER` prints the endpoint lines from the provider's discovery document.
OIDC_PROVIDER_NAME = os.getenv("OIDC_PROVIDER_NAME", "single sign-on")
OIDC_RP_CLIENT_ID = os.getenv("OIDC_RP_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = envsecret("OIDC_RP_CLIENT_SECRET")
OIDC_OP_AUTHORIZATION_ENDPOINT = os.getenv("OIDC_OP_AUTHORIZATION_ENDPOINT", "")
OIDC_OP_TOKEN_ENDPOINT = os.getenv("OIDC_OP_TOKEN_ENDPOINT", "")
OIDC_OP_USER_ENDPOINT = os.getenv("OIDC_OP_USER_ENDPOINT", "")
OIDC_OP_JWKS_ENDPOINT = os.getenv("OIDC_OP_JWKS_ENDPOINT", "")
OIDC_OP_LOGOUT_ENDPOINT = os.getenv("OIDC_OP_LOGOUT_ENDPOINT", "")
OIDC_RP_SIGN_ALGO = os.getenv("OIDC_RP_SIGN_ALGO", "RS256")
# preferred_username comes with the "profile" scope.
OIDC_RP_SCOPES = os.getenv("OIDC_RP_SCOPES", "openid profile email")
# The claim naming the cluster account. Users must not be able to edit it at the
# provider (Keycloak: "Edit username" off), or they could pick someone else's account.
OIDC_USERNAME_CLAIM = os.getenv("OIDC_USERNAME_CLAIM", "preferred_username")
OIDC_GROUPS_CLAIM = os.getenv("OIDC_GROUPS_CLAIM", "groups")
# Members of these groups (as the claim spells them) are instructors, and stop being
# so when they leave them; none named: instructors are managed in the admin.
OIDC_INSTRUCTOR_GROUPS = envlist("OIDC_INSTRUCTOR_GROUPS", "")
OIDC_AUTHENTICATION_CALLBACK_URL = "oidc-callback"
OIDC_STORE_ID_TOKEN = bool(OIDC_OP_LOGOUT_ENDPOINT)  # the id_token_hint of the logout
OIDC_TIMEOUT = 10  # seconds: a hung provider must not hold a web worker
if LOGIN_METHOD == "oidc":
    _needed = {
        "OIDC_RP_CLIENT_ID": OIDC_RP_CLIENT_ID,
        "OIDC_OP_AUTHORIZATION_ENDPOINT": OIDC_OP_AUTHORIZATION_ENDPOINT,
        "OIDC_OP_TOKEN_ENDPOINT": OIDC_OP_TOKEN_ENDPOINT,
        "OIDC_OP_USER_ENDPOINT": OIDC_OP_USER_ENDPOINT,
    }
    if OIDC_RP_SIGN_ALGO.startswith(("RS", "ES")):
        _needed["OIDC_OP_JWKS_ENDPOINT"] = OIDC_OP_JWKS_ENDPOINT  # the provider's keys
    elif OIDC_RP_SIGN_ALGO.startswith("HS"):
        _needed["OIDC_RP_CLIENT_SECRET"] = OIDC_RP_CLIENT_SECRET  # the signing key
    else:
        raise ImproperlyConfigured(
            f"OIDC_RP_SIGN_ALGO must be an RS*, ES* or HS* algorithm, not {OIDC_RP_SIGN_ALGO!r}"
        )
    _missing = [name for name, value in _needed.items() if not value]
    if _missing:
        raise ImproperlyConfigured(
            f"LOGIN_METHOD=oidc needs {', '.join(_missing)}; "
            "`manage.py oidc_endpoints ISSUER_URL` prints the endpoints of a provider"
        )
    AUTHENTICATION_BACKENDS.append("portal.oidc.OIDCBackend")

# REMOTE_USER: the WSGI variable Apache (mod_wsgi) sets, or HTTP_X_REMOTE_USER for a
# header X-Remote-User from a reverse proxy that strips the one clients send.
REMOTE_USER_HEADER = os.getenv("REMOTE_USER_HEADER", "REMOTE_USER")
_http_header = REMOTE_USER_HEADER.startswith("HTTP_") and REMOTE_USER_HEADER.isupper()
if not (REMOTE_USER_HEADER == "REMOTE_USER" or _http_header and REMOTE_USER_HEADER.isidentifier()):
    raise ImproperlyConfigured(
        f"REMOTE_USER_HEADER is a WSGI variable (REMOTE_USER, or HTTP_X_REMOTE_USER for "
        f"a header X-Remote-User), not {REMOTE_USER_HEADER!r}"
    )
# A header is believed only from the site's front end (portal/proxies.py): from these
# addresses (or networks), and/or with this secret in X-Storagelab-Proxy-Secret.
REMOTE_USER_PROXIES = envnetworks("REMOTE_USER_PROXIES")
REMOTE_USER_PROXY_SECRET = envsecret("REMOTE_USER_PROXY_SECRET")
# alice@REALM logs in as alice for these realms exactly; a name of another realm is
# refused (Kerberos principals, Shibboleth's eppn).
REMOTE_USER_REALMS = envlist("REMOTE_USER_REALMS", "")
if envbool("REMOTE_USER_STRIP_REALM", "false"):
    raise ImproperlyConfigured(
        "REMOTE_USER_STRIP_REALM stripped any realm, whoever's: name the realms whose "
        "users are this site's in REMOTE_USER_REALMS instead (e.g. EXAMPLE.ORG)"
    )
REMOTE_USER_LOGOUT_URL = os.getenv("REMOTE_USER_LOGOUT_URL", "")  # the front end's logout
INSTRUCTOR_UNIX_GROUPS = envlist("INSTRUCTOR_UNIX_GROUPS", "")
if (
    LOGIN_METHOD == "remote_user"
    and REMOTE_USER_HEADER != "REMOTE_USER"
    and not (REMOTE_USER_PROXIES or REMOTE_USER_PROXY_SECRET)
):
    raise ImproperlyConfigured(
        f"REMOTE_USER_HEADER={REMOTE_USER_HEADER} is a header anyone can send: name the "
        "front end's addresses in REMOTE_USER_PROXIES, or a secret it adds in "
        "REMOTE_USER_PROXY_SECRET (or _FILE)"
    )
if LOGIN_METHOD == "remote_user":
    AUTHENTICATION_BACKENDS.append("portal.remote_user.RemoteUserBackend")
    MIDDLEWARE.insert(
        MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1,
        "portal.remote_user.RemoteUserMiddleware",
    )

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.getenv("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS: list = [BASE_DIR / "static"]
# Chart.js from Debian's libjs-chart.js (or any folder holding chart.umd/min.js).
CHARTJS_DIR = Path(os.getenv("CHARTJS_DIR", "/usr/share/javascript/chart.js"))
if CHARTJS_DIR.is_dir():
    STATICFILES_DIRS.append(("vendor/chartjs", CHARTJS_DIR))
STATIC_ROOT = Path(os.getenv("STATIC_ROOT", BASE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Sessions live in the database only: with Redis (the cache) down, cached_db sessions
# would fail every logged-in page before any view runs; a session is one primary-key
# read, cheap enough for a class polling every 2 s.
SESSION_ENGINE = "django.contrib.sessions.backends.db"
# A working day, not Django's two weeks: classroom PCs are shared, and the next
# course's trainee must not find the last one still logged in.
SESSION_COOKIE_AGE = envint("SESSION_HOURS", "9") * 3600
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = envbool("SECURE_COOKIES", "false")

# --- HTTPS: at a site the portal sits behind a proxy that terminates TLS ---------
# The proxy says a request came over https in X-Forwarded-Proto; trust the header
# only behind such a proxy, which sets it and strips what clients send.
if envbool("BEHIND_TLS_PROXY", "false"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", "false")
# Load balancers and container health checks probe over plain http from inside.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", "0")
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", "false")
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", "false")
X_FRAME_OPTIONS = "DENY"  # no page of the portal is meant to be framed
# The Content-Security-Policy of every answer (portal/csp.py): scripts, styles and the
# rest from the portal itself, nothing inline (the favicon is a data: URL). No
# form-action: logging out posts to the portal, which sends a single sign-on user on to
# the provider's logout, and Chromium holds a form's redirects to it too.
SECURE_CSP = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "frame-ancestors": ["'none'"],
}

# Redis: the Celery broker and the cache (the submission rate limit, the sync's marks,
# the class's figures, the quota round's lock, Check my job's counts). Its
# password (REDIS_PASSWORD or _FILE) goes into the URL here, never into the site's
# env file: whoever can write to the broker runs tasks, and Django's Redis cache
# unpickles what it reads.
REDIS_PASSWORD = envsecret("REDIS_PASSWORD")
REDIS_URL = with_password(os.getenv("REDIS_URL", "redis://127.0.0.1:6379/0"), REDIS_PASSWORD)
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "storagelab",
    }
}
CELERY_BROKER_URL = REDIS_URL
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery closes Django's database connections before and after every task unless
# this is set, and then only every so many tasks: the workers keep them as the web
# does instead (portal/celery.py: reuse_database_connections).
CELERY_DB_REUSE_MAX = 1000

# slurmrestd. Tokens are HS256 JWTs the portal signs with the cluster's key
# (SLURM_JWT_KEY_FILE), for the cluster user each request acts as. A site that
# forbids that sets SLURM_SERVICE_TOKEN (or _FILE): every request then acts as
# SLURM_SERVICE_USER.
SLURMRESTD_URL = os.getenv("SLURMRESTD_URL", "http://127.0.0.1:6820")
SLURMRESTD_TIMEOUT = float(os.getenv("SLURMRESTD_TIMEOUT", "10"))
# For https: the CA bundle (PEM) that signed slurmrestd's certificate, when it is
# the site's own CA; unset, the public CAs (certifi) are trusted.
SLURMRESTD_CA_BUNDLE = os.getenv("SLURMRESTD_CA_BUNDLE", "")
if SLURMRESTD_CA_BUNDLE and not Path(SLURMRESTD_CA_BUNDLE).is_file():
    raise ImproperlyConfigured(f"SLURMRESTD_CA_BUNDLE: no such file {SLURMRESTD_CA_BUNDLE}")
SLURM_JWT_KEY_FILE = os.getenv("SLURM_JWT_KEY_FILE", "/etc/slurm/jwt_hs256.key")
SLURM_JWT_LIFESPAN = envint("SLURM_JWT_LIFESPAN", "600")
SLURM_SERVICE_TOKEN = envsecret("SLURM_SERVICE_TOKEN")
SLURM_SERVICE_USER = os.getenv("SLURM_SERVICE_USER", "slurmrestd")
SLURM_PARTITION = os.getenv("SLURM_PARTITION", "debug")
# Slurm 22.05's API does not name the cluster; used when slurmrestd does not say.
SLURM_CLUSTER_NAME = os.getenv("SLURM_CLUSTER_NAME", "")
# Jobs run only as people's own accounts (portal/accounts.py): a UID in this range
# (Debian's login.defs), and never Slurm's own user, read from SLURM_CONF (SlurmUser)
# unless SLURM_USER names it.
CLUSTER_UID_MIN = envint("CLUSTER_UID_MIN", "1000")
CLUSTER_UID_MAX = envint("CLUSTER_UID_MAX", "60000")
if not 0 < CLUSTER_UID_MIN <= CLUSTER_UID_MAX:
    raise ImproperlyConfigured(
        f"CLUSTER_UID_MIN ({CLUSTER_UID_MIN}) must be above 0 and at most CLUSTER_UID_MAX "
        f"({CLUSTER_UID_MAX})"
    )
SLURM_USER = os.getenv("SLURM_USER", "")
SLURM_CONF = os.getenv("SLURM_CONF", "/etc/slurm/slurm.conf")
# Submissions per second to slurmrestd, for the whole portal.
SLURM_SUBMIT_RATE = envint("SLURM_SUBMIT_RATE", "10")
# A submit attempt holds its run this long; a run seen queued longer is resubmitted.
SUBMIT_LEASE_SECONDS = envint("SUBMIT_LEASE_SECONDS", "30")
# An attempt makes up to three requests in a row (a fresh worker's API version ping,
# the job list, the submission), each up to SLURMRESTD_TIMEOUT; a lease that ran out
# while one is in flight would let a second attempt submit a second job.
if SUBMIT_LEASE_SECONDS < 3 * SLURMRESTD_TIMEOUT:
    raise ImproperlyConfigured(
        f"SUBMIT_LEASE_SECONDS ({SUBMIT_LEASE_SECONDS}) must be at least three times "
        f"SLURMRESTD_TIMEOUT ({SLURMRESTD_TIMEOUT:g})"
    )
# A run whose job Slurm no longer lists this long after its submission, and whose
# output never came, is lost (jobs/lost.py).
LOST_AFTER_SECONDS = envint("LOST_AFTER_SECONDS", "30")
# The portal's own identities beyond the UID it runs as and DARSHAN_SANDBOX_USER, never a
# job account either: the image sets its user's UID here (docker/Dockerfile).
try:
    PORTAL_UIDS = [int(uid) for uid in envlist("PORTAL_UIDS", "")]
except ValueError:
    raise ImproperlyConfigured("PORTAL_UIDS must be UIDs (numbers), comma-separated") from None

# The site profile in use (exercises/catalogue/sites/NAME.toml, loaded with
# `manage.py load_site_profile NAME`).
SITE_PROFILE = os.getenv("SITE_PROFILE", "dev")
# Runs a user may have going at once (queued, pending or running); more wait for a
# free slot and start by themselves (jobs/slots.py), up to this many waiting.
MAX_ACTIVE_RUNS_PER_USER = envint("MAX_ACTIVE_RUNS_PER_USER", "8")
MAX_WAITING_RUNS_PER_USER = envint("MAX_WAITING_RUNS_PER_USER", "40")
# A user's runs go to Slurm each to start after the one before it (jobs/submission.py:
# _in_turn), so that the four targets of one click do not measure each other. A site
# whose nodes give each job its own disks and link may let them overlap (false).
RUNS_IN_TURN = envbool("RUNS_IN_TURN", "true")
# A start of an exercise on a target the user started it on this recently asks first
# (exercises/lab/start.py: StartAgain): a double click, a second tab, an impatient
# second click. A repeat on purpose is the form's "Runs on each target", or the
# question's own "Start once more".
START_AGAIN_SECONDS = envint("START_AGAIN_SECONDS", "10")
# How often a trainee's lab panel takes in the class's new results (their own: at once).
# Each refresh redraws the panel of every trainee whose class has new results and
# whose own runs are done: at 10 s, five classes of 200 redrew 22 panels a second a
# few minutes into their queue's drain, and up to 100 as more trainees finished
# (bench: classes24); a class median needs no such haste.
CLASS_REFRESH_SECONDS = envint("CLASS_REFRESH_SECONDS", "30")
# How often it looks while none of my runs has changed for RUN_FOLLOW_SECONDS (they
# wait in the portal's queue or for a node, or run long); every 2 s after a change.
# Five classes of 200 polling every 2 s are 500 requests a second (bench: classes24).
WAITING_POLL_SECONDS = envint("WAITING_POLL_SECONDS", "10")
RUN_FOLLOW_SECONDS = envint("RUN_FOLLOW_SECONDS", "20")
# Runs of a calibration round going at once (exercises/calibration/rounds.py): the round
# measures the site, so it must not crowd the node or queue ahead of the users. With
# RUNS_IN_TURN its runs (all of one account) measure one at a time whatever this is: a
# second one going waits in Slurm for the first, and starts as it ends.
CALIBRATION_PARALLEL = envint("CALIBRATION_PARALLEL", "2")
if CALIBRATION_PARALLEL < 1:
    raise ImproperlyConfigured(
        f"CALIBRATION_PARALLEL must be 1 or more, not {CALIBRATION_PARALLEL}"
    )
# The filesystem's weather (exercises/weather/): every WEATHER_MINUTES (0: never by
# itself) a small canary of each kind on each target, as WEATHER_ACCOUNT's cluster
# account (a portal login with one; unset: none), running the workload of a calibrated
# exercise (canaries.py says why these settings); readings kept WEATHER_RETENTION_DAYS.
WEATHER_MINUTES = envint("WEATHER_MINUTES", "15")
WEATHER_ACCOUNT = os.getenv("WEATHER_ACCOUNT", "")
WEATHER_STREAMING_EXERCISE = os.getenv("WEATHER_STREAMING_EXERCISE", "1a")
WEATHER_METADATA_EXERCISE = os.getenv("WEATHER_METADATA_EXERCISE", "6")
WEATHER_RETENTION_DAYS = envint("WEATHER_RETENTION_DAYS", "30")
# A target's two canaries take seconds: one round in 5 minutes is already a few percent
# of its time (exercises/weather/canaries.py: MIN_MINUTES).
if WEATHER_MINUTES < 0 or 0 < WEATHER_MINUTES < 5:
    raise ImproperlyConfigured(
        f"WEATHER_MINUTES must be 0 (off) or 5 or more, not {WEATHER_MINUTES}"
    )
if WEATHER_RETENTION_DAYS < 0:
    raise ImproperlyConfigured("WEATHER_RETENTION_DAYS must be 0 (no limit) or more")

# Benchmark runs. Jobs post their output to PORTAL_CALLBACK_URL, which compute
# nodes must reach.
PORTAL_CALLBACK_URL = os.getenv("PORTAL_CALLBACK_URL", "http://127.0.0.1:8000")
RESULT_MAX_BYTES = envint("RESULT_MAX_BYTES", str(4 * 1024 * 1024))
DATA_UPLOAD_MAX_MEMORY_SIZE = RESULT_MAX_BYTES + 1024
# The largest body of any other request (forms): portal/limits.py refuses more unread.
REQUEST_MAX_BYTES = envint("REQUEST_MAX_BYTES", str(1024 * 1024))
# How long a job keeps trying to post its output to a portal that does not answer (a
# restart, a deploy), pausing up to 30 s between tries; its time limit grows by as much.
RESULT_RETRY_SECONDS = envint("RESULT_RETRY_SECONDS", "600")
# After Slurm says COMPLETED, how long a missing result is awaited before the run
# says its result never arrived.
RESULT_GRACE_SECONDS = envint("RESULT_GRACE_SECONDS", "60")
# What a run keeps only to show what came (jobs/retention.py): its raw output and its
# Darshan logs go RAW_OUTPUT_RETENTION_DAYS after they came, and beyond
# RAW_OUTPUT_USER_MAX_MB (MiB) per user, their oldest first; the figures and profiles
# read from them stay. 0: no such limit. 200 MiB holds a course's runs many times over
# (fio's output is 5-50 KiB, Darshan's logs about 2 KiB a process: over 2,000 runs), and
# still 33 runs of the largest a run may keep (4 MiB of output, 2 MiB of logs).
RAW_OUTPUT_RETENTION_DAYS = envint("RAW_OUTPUT_RETENTION_DAYS", "90")
RAW_OUTPUT_USER_MAX_MB = envint("RAW_OUTPUT_USER_MAX_MB", "200")
if RAW_OUTPUT_RETENTION_DAYS < 0 or RAW_OUTPUT_USER_MAX_MB < 0:
    raise ImproperlyConfigured(
        "RAW_OUTPUT_RETENTION_DAYS and RAW_OUTPUT_USER_MAX_MB must be 0 (no limit) or more"
    )
JOB_PATH = os.getenv("JOB_PATH", "/usr/local/bin:/usr/bin:/bin")
# How a job starts the ranks of an MPI benchmark (IOR, mdtest) inside its allocation;
# the job script adds "-n RANKS" and the program. Sites differ: `srun --mpi=pmix` (or
# pmi2) where Slurm and the MPI share a PMI, `mpirun` (or mpiexec) where the MPI finds
# the allocation itself. The dev cluster runs Debian's Open MPI, which both start.
MPI_LAUNCHER = envcommand("MPI_LAUNCHER", "mpirun", ("srun", "mpirun", "mpiexec"))
SYNC_INTERVAL_SECONDS = float(os.getenv("SYNC_INTERVAL_SECONDS", "2"))
SYNC_LOCK_SECONDS = envint("SYNC_LOCK_SECONDS", "60")
# Check my job (jobio/): the largest Darshan log accepted, how long and with how much
# memory one log may be read (in a child process, jobio/sandbox.py), and where a site
# keeps its jobs' logs (darshan-runtime's log path: YYYY/M/D/ below it; empty: uploads
# only) and how many days back a job is looked for there.
DARSHAN_MAX_BYTES = envint("DARSHAN_MAX_BYTES", str(64 * 2**20))
DARSHAN_PARSE_SECONDS = envint("DARSHAN_PARSE_SECONDS", "20")
DARSHAN_PARSE_MEMORY_MB = envint("DARSHAN_PARSE_MEMORY_MB", "768")
DARSHAN_LOG_DIR = os.getenv("DARSHAN_LOG_DIR", "")
DARSHAN_LOG_DAYS = envint("DARSHAN_LOG_DAYS", "14")
# The reader of each log runs as this user, who must own nothing of the portal's (a
# name, or "UID:GID" where the containers do not know it): jobio/sandbox.py.
DARSHAN_SANDBOX_USER = os.getenv("DARSHAN_SANDBOX_USER", "storagelab-sandbox")
# The program that starts each reader as that user (docker/sandbox/: built for its UID,
# with CAP_SETUID, CAP_SETGID and CAP_KILL as file capabilities; the workers hold none).
DARSHAN_SANDBOX_HELPER = os.getenv(
    "DARSHAN_SANDBOX_HELPER", "/usr/local/libexec/storagelab-sandbox"
)
# Checks go to a queue of their own, taken by a worker of its own (up.sh: `--queues
# darshan`): at most DARSHAN_CHECKS_GOING per user at once, DARSHAN_CHECKS_PER_HOUR
# started per user, DARSHAN_USER_MAX_BYTES of logs per user waiting to be read.
DARSHAN_QUEUE = "darshan"
DARSHAN_CHECKS_GOING = envint("DARSHAN_CHECKS_GOING", "2")
DARSHAN_CHECKS_PER_HOUR = envint("DARSHAN_CHECKS_PER_HOUR", "30")
DARSHAN_USER_MAX_BYTES = envint("DARSHAN_USER_MAX_BYTES", str(128 * 2**20))
# How long finding a job's log in DARSHAN_LOG_DIR may take (a hung mount).
DARSHAN_LOOKUP_SECONDS = envint("DARSHAN_LOOKUP_SECONDS", "10")
# Each lab run's own I/O profile: darshan-runtime's libdarshan.so, built without MPI,
# as the compute nodes have it (empty: runs are not recorded). The job script preloads
# it into the benchmark and sends the logs, up to RUN_DARSHAN_MAX_BYTES, which stay
# with the run (jobio/runs.py).
RUN_DARSHAN_RUNTIME = os.getenv("RUN_DARSHAN_RUNTIME", "")
if RUN_DARSHAN_RUNTIME and not re.fullmatch(r"/[A-Za-z0-9._/+-]+\.so[0-9.]*", RUN_DARSHAN_RUNTIME):
    raise ImproperlyConfigured(
        "RUN_DARSHAN_RUNTIME must be the absolute path of libdarshan.so on the compute nodes"
    )
RUN_DARSHAN_MAX_BYTES = envint("RUN_DARSHAN_MAX_BYTES", str(2 * 2**20))
# Runs' logs go to the same reader, counted with their owner's checks in line and bytes
# waiting (those beyond DARSHAN_CHECKS_GOING wait for a place), but not in the checks
# of an hour: at most RUN_DARSHAN_PER_HOUR runs' logs a user per hour, more are not
# kept. 120: every exercise of the dev site on each target it records (45 runs) twice
# over, with room; a loop of short runs (8 at once, seconds each) is held to it.
RUN_DARSHAN_PER_HOUR = envint("RUN_DARSHAN_PER_HOUR", "120")
# Runs on a target in memory are not recorded: Darshan's quarter of a microsecond per
# call slows a million 4 KiB writes a second by a quarter (make bench, darshan.json),
# far beyond the run-to-run spread. True records them too (make bench does, to say so).
RUN_DARSHAN_IN_MEMORY = envbool("RUN_DARSHAN_IN_MEMORY", "false")

# Replay my job (jobio/replays.py): a checked job's I/O replayed on every target as its
# owner, each replay within REPLAY_MAX_BYTES, REPLAY_MAX_PROCESSES and REPLAY_MAX_FILES
# files at once; each run is timed for REPLAY_SECONDS (3 at least: a shorter run ranks
# nothing), so a slow target costs no more time than a fast one. One replay going per
# user, at most REPLAYS_PER_DAY a day. The files' bound is a target's inodes, which
# every user shares (the dev $HOME has 262,144): 2,000, a little above the lab's largest
# exercise (6: 8 x 200), so a replay costs a filesystem no more inodes than the lab
# does, and a class of 100 replaying at once stays within the dev $HOME. mdtest makes
# them again, up to 100 times, where a fast target needs more (jobio/replay.py).
REPLAY_MAX_BYTES = envint("REPLAY_MAX_BYTES", str(2**30))
REPLAY_MAX_PROCESSES = envint("REPLAY_MAX_PROCESSES", "8")
REPLAY_MAX_FILES = envint("REPLAY_MAX_FILES", "2000")
REPLAY_SECONDS = envint("REPLAY_SECONDS", "60")
REPLAYS_PER_DAY = envint("REPLAYS_PER_DAY", "10")
if REPLAY_MAX_FILES < 1:
    raise ImproperlyConfigured(f"REPLAY_MAX_FILES must be 1 or more, not {REPLAY_MAX_FILES}")

# Quota collection (exercises/quotas/): how often, how long one tool may take, where the
# tools are looked for, the most files the local collector counts in one user's directory,
# and Open OnDemand quota files to import (colon-separated, like OOD_QUOTA_PATH).
QUOTA_INTERVAL_SECONDS = float(os.getenv("QUOTA_INTERVAL_SECONDS", "600"))
QUOTA_COMMAND_TIMEOUT = float(os.getenv("QUOTA_COMMAND_TIMEOUT", "30"))
QUOTA_TOOL_PATH = os.getenv(
    "QUOTA_TOOL_PATH", "/usr/lpp/mmfs/bin:/opt/beegfs/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/bin"
)
QUOTA_LOCAL_MAX_ENTRIES = envint("QUOTA_LOCAL_MAX_ENTRIES", "1000000")
QUOTA_ONDEMAND_FILES = [p for p in os.getenv("QUOTA_ONDEMAND_FILES", "").split(":") if p]
# Usage history (exercises/quotas/history.py): how many days of each account's readings
# are kept (one an hour, one a day once a week old) for My storage's chart and forecast.
QUOTA_HISTORY_DAYS = envint("QUOTA_HISTORY_DAYS", "90")
# The storage scan (exercises/quotas/scans.py): a job as the user on every target they
# have a directory on, for what fills it and what the purge takes. Each target's walk
# stops after SCAN_MAX_ENTRIES entries or SCAN_SECONDS seconds; SCAN_TOP directories
# and files are named; a user may start one every SCAN_AGAIN_MINUTES; every
# SCAN_INTERVAL_HOURS the users active in the last SCAN_ACTIVE_DAYS are scanned (0: never).
SCAN_MAX_ENTRIES = envint("SCAN_MAX_ENTRIES", "2000000")
SCAN_SECONDS = envint("SCAN_SECONDS", "300")
SCAN_TOP = envint("SCAN_TOP", "20")
SCAN_AGAIN_MINUTES = envint("SCAN_AGAIN_MINUTES", "10")
SCAN_INTERVAL_HOURS = envint("SCAN_INTERVAL_HOURS", "24")
SCAN_ACTIVE_DAYS = envint("SCAN_ACTIVE_DAYS", "14")
SCAN_RESULT_MAX_BYTES = envint("SCAN_RESULT_MAX_BYTES", str(512 * 1024))
# Targets whose purge the portal itself runs, by the profile's [targets.purge] table, as
# each account's job, every PURGE_INTERVAL_HOURS (comma-separated keys; exercises/quotas/
# purge.py). A site's own purge (Robinhood, a cron job) needs none: the dev cluster's
# $SCRATCH has no other.
PURGE_TARGETS = [k for k in os.getenv("PURGE_TARGETS", "").split(",") if k]
PURGE_INTERVAL_HOURS = envint("PURGE_INTERVAL_HOURS", "24")
# E-mail to a user once each time a forecast or a purge crosses its line (notices.py):
# a target filling within 7 days, files due for purge within 3. Off unless set; the
# demo's console backend prints them in the worker's log.
STORAGE_NOTICES = envbool("STORAGE_NOTICES", "false")
# Where the portal is for its users (links in e-mails), and how mail leaves it.
PORTAL_URL = os.getenv("PORTAL_URL", "http://localhost:8000")
EMAIL_BACKEND = os.getenv("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = os.getenv("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", "25")
DEFAULT_FROM_EMAIL = os.getenv("DEFAULT_FROM_EMAIL", "storagelab@localhost")
# Anonymous /healthz (load balancers) answers from checks at most this old, per
# web worker: probes cannot pile onto slurmrestd. Staff always get fresh checks.
HEALTHZ_CACHE_SECONDS = float(os.getenv("HEALTHZ_CACHE_SECONDS", "5"))
# Quota rounds go to a queue of their own, taken by a worker of its own on a host where
# the filesystems are mounted (up.sh: `celery worker --queues quotas`): a round waiting on
# a hung mount never holds a slot of the workers that submit and follow runs ("celery").
QUOTA_QUEUE = "quotas"
# A job's output is read on a queue of its own too, taken by a worker of its own
# (up.sh: `--queues results`): the text is the job owner's, and however long one takes
# to read (within the task's time limits), no submission or sync waits behind it.
RESULTS_QUEUE = "results"
CELERY_TASK_ROUTES = {
    "exercises.tasks.collect_quotas": {"queue": QUOTA_QUEUE},
    "jobs.tasks.ingest_result": {"queue": RESULTS_QUEUE},
    "jobio.tasks.read_check": {"queue": DARSHAN_QUEUE},
    "jobio.tasks.end_lost_checks": {"queue": DARSHAN_QUEUE},
    "jobio.tasks.read_run_logs": {"queue": DARSHAN_QUEUE},
}
CELERY_BEAT_SCHEDULE = {
    "sync-runs": {"task": "jobs.tasks.sync_runs", "schedule": SYNC_INTERVAL_SECONDS},
    # Starts the next runs of a calibration round as slots free up; ends finished rounds.
    "advance-calibrations": {
        "task": "exercises.tasks.advance_calibrations",
        "schedule": SYNC_INTERVAL_SECONDS,
    },
    "collect-quotas": {
        "task": "exercises.tasks.collect_quotas",
        "schedule": QUOTA_INTERVAL_SECONDS,
    },
    # Ends Darshan checks whose reader was lost (a worker killed, a restart).
    "end-lost-checks": {"task": "jobio.tasks.end_lost_checks", "schedule": 60},
    # Drops raw outputs and runs' logs past RAW_OUTPUT_RETENTION_DAYS or the user's cap.
    "drop-raw-outputs": {"task": "jobs.tasks.drop_raw_outputs", "schedule": 600},
    # The weather: readings of canaries that ended, then the canaries due; old readings go.
    "take-readings": {"task": "weather.tasks.take_readings", "schedule": 10},
    "drop-old-readings": {"task": "weather.tasks.drop_old_readings", "schedule": 600},
    # Usage history: a day per sample once a week old, none past QUOTA_HISTORY_DAYS.
    "thin-usage-history": {"task": "quotas.tasks.thin_usage_history", "schedule": 3600},
    # Scans whose job ended without an answer are ended; the periodic scans and purges.
    "follow-scans": {"task": "quotas.tasks.follow_scans", "schedule": 60},
    "scan-storage": {"task": "quotas.tasks.scan_storage", "schedule": 3600},
    "purge-storage": {"task": "quotas.tasks.purge_storage", "schedule": 3600},
    "send-storage-notices": {"task": "quotas.tasks.send_storage_notices", "schedule": 3600},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.getenv("LOG_LEVEL", "INFO")},
    # httpx logs every URL at INFO; keep it quiet (and tokens are in headers, never URLs).
    # django-axes says "BEGIN" at every start of every process: only its lockouts.
    "loggers": {
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        "axes.apps": {"level": "WARNING"},
    },
}
