from django.apps import AppConfig

# What a document says once its job's runs are spent (ops/recovery.py).
GAVE_UP = (
    "Making it stopped before it finished, %(attempts)s times (the worker was stopped or "
    "the database was unreachable). Retry to try again."
)


class GenerationConfig(AppConfig):
    name = "generation"

    def ready(self) -> None:
        from generation.documents.models import GeneratedDocument
        from ops import recovery

        recovery.register(
            recovery.Work(
                task_name="generation.tasks.generate_document",
                argument="document_id",
                model=GeneratedDocument,
                name="document",
                gave_up=GAVE_UP,
            )
        )
