"""Who may call a view: one decorator for every page that only some users see."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden

View = Callable[..., HttpResponse]


def only_if(may: Callable[[AbstractBaseUser], bool], refused: str) -> Callable[[View], View]:
    """The view for users `may` lets in; a visitor not logged in is sent to log in,
    anyone else gets a 403 that says `refused` (who may, and why)."""

    def decorate(view: View) -> View:
        @wraps(view)
        @login_required
        def checked(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            if not may(request.user):
                return HttpResponseForbidden(refused)
            return view(request, *args, **kwargs)

        return checked

    return decorate
