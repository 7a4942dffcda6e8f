"""Who may call a view: one decorator for every page that only some users see."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, HttpResponse

from portal.errors import error_page

View = Callable[..., HttpResponse]


def is_staff(user: AbstractBaseUser) -> bool:
    """For `only_if`: the site's staff (every user's storage, the week's weather)."""
    return user.is_staff


def only_if(may: Callable[[AbstractBaseUser], bool], refused: str) -> Callable[[View], View]:
    """The view for users `may` lets in; a visitor not logged in is sent to log in,
    anyone else gets the portal's 403 page, which says `refused` (who may, and why)."""

    def decorate(view: View) -> View:
        @wraps(view)
        @login_required
        def checked(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            if not may(request.user):
                # Answered, not raised: Django logs a raised PermissionDenied with its
                # traceback, and a trainee opening an instructor's page is no error.
                return error_page(request, 403, refused)
            return view(request, *args, **kwargs)

        return checked

    return decorate
