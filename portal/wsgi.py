import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
application = get_wsgi_application()

from portal.celery import open_broker_for_web  # noqa: E402 (after Django is set up)

open_broker_for_web()
