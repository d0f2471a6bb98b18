from django.apps import AppConfig


class LibraryConfig(AppConfig):
    name = "library"

    def ready(self) -> None:
        from library import checks  # noqa: F401  (registers the system checks)
