from django.contrib import admin
from django.urls import include, path

from portal import oidc, views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("login/", views.login, name="login"),
    path("logout/", views.logout, name="logout"),
    # Answer only with LOGIN_METHOD=oidc (portal/oidc.py).
    path("oidc/login/", oidc.Start.as_view(), name="oidc-login"),
    path("oidc/callback/", oidc.Callback.as_view(), name="oidc-callback"),
    # Calibration before the lab: "lab/calibration/" is no exercise.
    path("", include("exercises.calibration.urls")),
    path("", include("exercises.lab.urls")),
    path("", include("exercises.courses.urls")),
    path("", include("exercises.quotas.urls")),
    path("", include("exercises.advisor.urls")),
    path("jobs/", include("jobs.urls")),
    path("check-my-job/", include("jobio.urls")),
    path("weather/", include("exercises.weather.urls")),
    path("admin/", admin.site.urls),
]

# Every 403, 404 and 500 is a page of the portal, in its words (portal/errors.py).
handler403 = "portal.errors.permission_denied"
handler404 = "portal.errors.page_not_found"
handler500 = "portal.errors.server_error"
