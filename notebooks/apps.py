from django.apps import AppConfig


class NotebooksConfig(AppConfig):
    name = "notebooks"
