"""A course's state in words, for its pages and its trainees' lab.

{% load course_state %}
{{ course|state }}              {# "open", "open until 2026-12-01 17:00", "closed since 08:38" #}
{% closed_courses_notice %}     {# on the lab: the trainee's courses that closed lately #}
"""

from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from exercises.courses import access
from exercises.courses.models import Course

register = template.Library()


def moment(when: datetime) -> str:
    """'08:38' today, '2026-11-25 08:38' on another day, in the site's time zone."""
    local = timezone.localtime(when)
    if local.date() == timezone.localdate():
        return local.strftime("%H:%M")
    return local.strftime("%Y-%m-%d %H:%M")


@register.filter
def state(course: Course) -> str:
    """Whether the course is open, and since or until when: a closed course says when
    it closed, never 'until' that moment."""
    now = timezone.now()
    if course.opens_at > now:
        return f"opens at {moment(course.opens_at)}"
    if course.closes_at is None:
        return "open"
    if course.closes_at > now:
        return f"open until {moment(course.closes_at)}"
    return f"closed since {moment(course.closes_at)}"


@register.simple_tag(takes_context=True)
def closed_courses_notice(context: template.Context) -> SafeString | str:
    """On a trainee's lab: each course of theirs that closed lately, and what that means
    for their runs."""
    user = context["request"].user
    closed = access.lately_closed_for(user) if user.is_authenticated else []
    if not closed:
        return ""
    return format_html_join(
        "",
        '<p class="message info course-closed">{} is closed (since {}): runs no longer '
        "count for {}. They stay here, in your own lab.</p>",
        ((c.title, moment(c.closes_at), c.title) for c in closed),
    )
