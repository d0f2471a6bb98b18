from django.apps import AppConfig

# What a source says once its job's runs are spent (ops/recovery.py).
GAVE_UP = (
    "Processing stopped before it finished, %(attempts)s times (the worker was stopped or "
    "the database was unreachable). Retry to try again."
)


class IngestConfig(AppConfig):
    name = "ingest"

    def ready(self) -> None:
        from library.models import Source
        from ops import recovery

        recovery.register(
            recovery.Work(
                task_name="ingest.tasks.ingest_source",
                argument="source_id",
                model=Source,
                name="source",
                gave_up=GAVE_UP,
            )
        )
