from django.apps import AppConfig


class TextsConfig(AppConfig):
    name = "texts"
