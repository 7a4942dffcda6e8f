"""Teaching takes the teach permission, now: an instructor taken out of the site's
instructors stays listed in their course and gets nothing of the instructor's (the
overview, the projector, the exports with the class's names and cluster accounts, a
change of the course or of a trainee), on a page that says why; enrolled in the
course, they still see the trainee's side. Every instructor's URL of the course is
tried, so one added later is too."""

import pytest
from django.urls import URLPattern

from exercises.courses import access
from exercises.courses.models import Course, Enrollment
from exercises.courses.urls import urlpatterns
from jobs.models import BenchmarkRun
from portal.logins import instructors_group

pytestmark = pytest.mark.django_db

# The course's URLs that are not the instructor's: the list, joining, creating a
# course (only_if(can_teach): refused to a former instructor too, tested below) and
# the trainee's checklist.
NOT_THE_INSTRUCTORS = {"course-list", "course-join", "course-create", "course-detail"}
# The instructor's, each with how it is called: the pages and exports by GET, the
# changes by POST, confirmed (the edit form is posted too).
INSTRUCTORS = {
    "course-overview": ("get", "/courses/{pk}/overview"),
    "course-edit": ("post", "/courses/{pk}/edit"),
    "participant": ("get", "/courses/{pk}/participants/{trainee}/"),
    "course-discussion": ("get", "/courses/{pk}/discussion/1a"),
    "participant-cancel": ("post", "/courses/{pk}/participants/{trainee}/cancel"),
    "participant-reset": ("post", "/courses/{pk}/participants/{trainee}/reset"),
    "participant-remove": ("post", "/courses/{pk}/participants/{trainee}/remove"),
    "course-undo": ("post", "/courses/{pk}/undo"),
    "course-close": ("post", "/courses/{pk}/close"),
    "course-reopen": ("post", "/courses/{pk}/reopen"),
    "course-join-code": ("post", "/courses/{pk}/join-code"),
    "course-export-csv": ("get", "/courses/{pk}/export.csv"),
    "course-export-json": ("get", "/courses/{pk}/export.json"),
}


@pytest.fixture
def former(people, make_user):
    """An instructor of the course, taken out of the site's instructors group since."""
    user = make_user("sl-former-inst")
    group = instructors_group()
    user.groups.add(group)
    people["course"].instructors.add(user)
    user.groups.remove(group)
    return user


def state(course: Course) -> tuple:
    """What a change of the course or of its trainees would change."""
    course.refresh_from_db()
    return (
        course.title,
        course.closes_at,
        course.join_code,
        sorted(course.enrollments.values_list("user_id", flat=True)),
        sorted(BenchmarkRun.objects.filter(course=course).values_list("pk", flat=True)),
    )


def test_every_url_of_a_course_is_classed_as_the_instructors_or_not() -> None:
    """A URL added to the courses is tried below as the instructor's, or named here
    as the trainee's: none goes untried."""
    names = {p.name for p in urlpatterns if isinstance(p, URLPattern)}
    assert names == NOT_THE_INSTRUCTORS | set(INSTRUCTORS)


@pytest.mark.parametrize("name", INSTRUCTORS)
def test_a_former_instructor_gets_none_of_the_instructors_pages_or_changes(
    client, people, former, name
) -> None:
    course, trainee = people["course"], people["trainee"]
    before = state(course)
    method, url = INSTRUCTORS[name]
    client.force_login(former)

    answer = getattr(client, method)(
        url.format(pk=course.pk, trainee=trainee.pk),
        {"confirmed": "yes", "title": "Taken over"} if method == "post" else None,
        headers={"accept": "text/html"},
    )

    assert answer.status_code == 403
    page = answer.content.decode()
    assert "You are not one of this site&#x27;s instructors any more" in page
    assert 'class="topbar"' in page  # the portal's page, not a bare answer
    assert trainee.username not in page and "sl-trainee5" not in page  # no name exported
    assert state(course) == before


def test_a_former_instructor_enrolled_in_the_course_still_sees_the_trainees_side(
    client, people, former
) -> None:
    course = people["course"]
    Enrollment.objects.create(course=course, user=former)
    client.force_login(former)

    checklist = client.get(f"/courses/{course.pk}/")
    overview = client.get(f"/courses/{course.pk}/overview")

    assert checklist.status_code == 200 and course.title in checklist.content.decode()
    assert overview.status_code == 403


def test_a_former_instructor_lists_no_course_as_taught_nor_creates_one(
    client, people, former
) -> None:
    client.force_login(former)

    listed = client.get("/courses/").content.decode()
    created = client.post("/courses/new", {"title": "Mine again"})

    assert "Courses you teach" not in listed and people["course"].title not in listed
    assert created.status_code == 403 and "Only instructors create courses." in (
        created.content.decode()
    )
    assert not Course.objects.filter(title="Mine again").exists()
    assert not access.taught_by(former).exists()


def test_an_instructor_of_another_course_gets_a_404_not_the_reason(client, people) -> None:
    client.force_login(people["other instructor"])

    answer = client.get(f"/courses/{people['course'].pk}/export.csv")

    assert answer.status_code == 404
    assert "No such course among the ones you teach." in answer.content.decode()


def test_a_current_instructor_still_exports_resets_cancels_and_closes(client, people) -> None:
    course, trainee = people["course"], people["trainee"]
    client.force_login(people["instructor"])
    at = f"/courses/{course.pk}/participants/{trainee.pk}"

    assert client.get(f"/courses/{course.pk}/overview").status_code == 200
    exported = client.get(f"/courses/{course.pk}/export.csv")
    assert exported.status_code == 200 and trainee.username in exported.content.decode()
    assert client.post(f"{at}/cancel", {"confirmed": "yes"}).status_code == 302
    assert client.post(f"{at}/reset", {"confirmed": "yes"}).status_code == 302
    assert not BenchmarkRun.objects.filter(course=course, user=trainee).exists()
    assert client.post(f"/courses/{course.pk}/close", {"confirmed": "yes"}).status_code == 302
    course.refresh_from_db()
    assert not course.is_open


def test_an_instructor_put_back_in_the_group_teaches_again(client, people, former) -> None:
    former.groups.add(instructors_group())
    client.force_login(former)

    assert client.get(f"/courses/{people['course'].pk}/overview").status_code == 200
