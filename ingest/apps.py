from django.apps import AppConfig
from django.utils.translation import gettext_noop

# What a source says once its job's runs are spent (ops/recovery.py).
# Marked for makemessages: stored as a Text and translated when shown (texts/).
GAVE_UP = gettext_noop(
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
