from django.urls import path

from exercises.advisor import views

app_name = "advisor"
urlpatterns = [
    path("advisor/", views.advisor, name="advisor"),
]
