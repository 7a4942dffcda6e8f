from django.apps import AppConfig


class CatalogueConfig(AppConfig):
    """The site: its storage targets, exercises, and the figures published and measured for them."""

    name = "exercises.catalogue"
    label = "catalogue"
    verbose_name = "Site catalogue"
