from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "retrieval"

    def ready(self) -> None:
        from ops import recovery
        from retrieval import checks  # noqa: F401  (registers the system checks)

        recovery.register_reembed("retrieval.tasks.reembed_chunks")
