from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
