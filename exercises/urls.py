from django.urls import path

from exercises import calibration_views, course_views, storage_views, views

app_name = "exercises"
urlpatterns = [
    path("lab/", views.exercise_list, name="exercise-list"),
    # Before lab/<key>/: "calibration" is no exercise.
    path("lab/calibration/", calibration_views.calibration_page, name="calibration"),
    path("lab/calibration/start", calibration_views.calibration_start, name="calibration-start"),
    path(
        "lab/calibration/<int:pk>/cancel",
        calibration_views.calibration_cancel,
        name="calibration-cancel",
    ),
    path("lab/<slug:key>/", views.exercise_detail, name="exercise-detail"),
    path("lab/<slug:key>/runs", views.exercise_start, name="exercise-start"),
    path("storage/", storage_views.my_storage, name="my-storage"),
    path("storage/<slug:key>/", views.target_detail, name="target-detail"),
    path("advisor/", views.advisor, name="advisor"),
    path("courses/", course_views.course_list, name="course-list"),
    path("courses/join", course_views.course_join, name="course-join"),
    path("courses/new", course_views.course_create, name="course-create"),
    path("courses/<int:pk>/", course_views.course_detail, name="course-detail"),
    path("courses/<int:pk>/overview", course_views.course_overview, name="course-overview"),
    path(
        "courses/<int:pk>/discussion/<slug:key>",
        course_views.course_discussion,
        name="course-discussion",
    ),
    *[
        path(
            f"courses/<int:pk>/participants/<int:user_id>/{action}",
            course_views.participant_action,
            {"action": action},
            name=f"participant-{action}",
        )
        for action in ("cancel", "reset")
    ],
    *[
        path(
            f"courses/<int:pk>/export.{fmt}",
            course_views.course_export,
            {"fmt": fmt},
            name=f"course-export-{fmt}",
        )
        for fmt in ("csv", "json")
    ],
]
