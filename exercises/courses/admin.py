"""Courses and who joined them, in the admin: staff find a course by its title or
join code, and a trainee's enrolments by name."""

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from exercises.courses.models import Course, Enrollment


@admin.register(Course)
class CourseAdmin(admin.ModelAdmin):
    list_display = ("title", "profile", "join_code", "open", "participants", "max_active_runs")
    list_filter = ("profile",)
    list_select_related = ("profile",)
    search_fields = ("title", "join_code")
    filter_horizontal = ("instructors", "exercises", "targets")
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Course]:
        return super().get_queryset(request).annotate(n_participants=Count("enrollments"))

    @admin.display(boolean=True)
    def open(self, course: Course) -> bool:
        return course.is_open

    @admin.display(ordering="n_participants")
    def participants(self, course: Course) -> int:
        return course.n_participants


@admin.register(Enrollment)
class EnrollmentAdmin(admin.ModelAdmin):
    list_display = ("user", "course", "joined_at")
    list_filter = ("course",)
    list_select_related = ("user", "course")
    search_fields = ("user__username", "course__title")
