from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "providers"

    def ready(self) -> None:
        from providers import checks  # noqa: F401  (registers the system checks)
