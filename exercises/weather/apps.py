from django.apps import AppConfig


class WeatherConfig(AppConfig):
    """The filesystem's weather: small canary runs on every target, kept as readings
    against the target's usual figure, shown beside people's own."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "exercises.weather"
    label = "weather"
    verbose_name = "Weather"
