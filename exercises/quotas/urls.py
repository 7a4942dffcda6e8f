from django.urls import path

from exercises.quotas import views

app_name = "quotas"
urlpatterns = [
    path("storage/", views.my_storage, name="my-storage"),
]
