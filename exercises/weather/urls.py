from django.urls import path

from exercises.weather import views

app_name = "weather"
urlpatterns = [
    path("", views.heatmap, name="heatmap"),
    path("runs/<uuid:key>", views.run_reading, name="run-reading"),
]
