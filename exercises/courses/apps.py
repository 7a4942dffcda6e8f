from django.apps import AppConfig


class CoursesConfig(AppConfig):
    """Courses: who teaches, who joined, what the class ran."""

    name = "exercises.courses"
    label = "courses"
    verbose_name = "Courses"
