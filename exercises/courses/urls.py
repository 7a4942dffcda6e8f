from django.urls import path

from exercises.courses import changes, views

app_name = "courses"
urlpatterns = [
    path("courses/", views.course_list, name="course-list"),
    path("courses/join", views.course_join, name="course-join"),
    path("courses/new", views.course_create, name="course-create"),
    path("courses/<int:pk>/", views.course_detail, name="course-detail"),
    path("courses/<int:pk>/overview", views.course_overview, name="course-overview"),
    path("courses/<int:pk>/edit", views.course_edit, name="course-edit"),
    path(
        "courses/<int:pk>/participants/<int:user_id>/",
        views.participant_detail,
        name="participant",
    ),
    path(
        "courses/<int:pk>/discussion/<slug:key>",
        views.course_discussion,
        name="course-discussion",
    ),
    *[
        path(
            f"courses/<int:pk>/participants/<int:user_id>/{action}",
            changes.participant_action,
            {"action": action},
            name=f"participant-{action}",
        )
        for action in ("cancel", "reset", "remove")
    ],
    path("courses/<int:pk>/undo", changes.course_undo, name="course-undo"),
    *[
        path(
            f"courses/<int:pk>/{change}",
            changes.course_change,
            {"change": change},
            name=f"course-{change}",
        )
        for change in ("close", "reopen", "join-code")
    ],
    *[
        path(
            f"courses/<int:pk>/export.{fmt}",
            views.course_export,
            {"fmt": fmt},
            name=f"course-export-{fmt}",
        )
        for fmt in ("csv", "json")
    ],
]
