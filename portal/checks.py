"""Site settings Django's own `check --deploy` does not know to refuse."""

from django.conf import settings
from django.core.checks import Error, register

from portal.proxies import listening_refusal


@register(deploy=True)
def callback_survives_the_https_redirect(app_configs, **kwargs) -> list[Error]:
    # curl does not follow a redirect of a POST with its body: a job's output
    # posted to http:// would be answered 301 and never reach the portal.
    if settings.SECURE_SSL_REDIRECT and settings.PORTAL_CALLBACK_URL.startswith("http://"):
        return [
            Error(
                f"PORTAL_CALLBACK_URL is {settings.PORTAL_CALLBACK_URL}, but SECURE_SSL_REDIRECT "
                "redirects plain http to https: the jobs' results would be lost.",
                hint="Give the https address compute nodes reach the portal by.",
                id="storagelab.E001",
            )
        ]
    return []


@register(deploy=True)
def proxies_named_where_the_portal_listens(app_configs, **kwargs) -> list[Error]:
    # gunicorn refuses to start on the same rule, with the addresses it listens on
    # (docker/gunicorn.conf.py); here it is said before anything starts.
    why = listening_refusal(settings.WEB_BIND)
    if why:
        return [
            Error(
                why,
                hint="GUNICORN_BIND says where the web server listens (the image: 0.0.0.0:8000).",
                id="storagelab.E002",
            )
        ]
    return []
