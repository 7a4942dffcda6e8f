from django.urls import path

from exercises.lab import company, views

app_name = "lab"
urlpatterns = [
    path("lab/", views.exercise_list, name="exercise-list"),
    path("lab/<slug:key>/", views.exercise_detail, name="exercise-detail"),
    path("lab/<slug:key>/runs", views.exercise_start, name="exercise-start"),
    path("lab/<slug:key>/prediction", views.exercise_predict, name="exercise-predict"),
    path("storage/<slug:key>/", views.target_detail, name="target-detail"),
    path("lab/runs/<uuid:key>/company", company.run_company, name="run-company"),
]
