from django.apps import AppConfig


class OpsConfig(AppConfig):
    """Running Loupe in production: health, job upkeep, retries, structured logs."""

    name = "ops"
