from django.apps import AppConfig
from django.utils.translation import gettext_noop

# What a document says once its job's runs are spent (ops/recovery.py).
# Marked for makemessages: stored as a Text and translated when shown (texts/).
GAVE_UP = gettext_noop(
    "Making it stopped before it finished, %(attempts)s times (the worker was stopped or "
    "the database was unreachable). Retry to try again."
)


# What a slide revision says once its job's runs are spent.
REVISION_GAVE_UP = gettext_noop(
    "Revising the slide stopped before it finished, %(attempts)s times (the worker was "
    "stopped or the database was unreachable). Ask again to try again."
)


class GenerationConfig(AppConfig):
    name = "generation"

    def ready(self) -> None:
        from citations.lookup import register
        from generation.documents.models import (
            DocumentCitation,
            GeneratedDocument,
            SlideRevision,
        )
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
        recovery.register(
            recovery.Work(
                task_name="generation.tasks.revise_slide",
                argument="revision_id",
                model=SlideRevision,
                name="slide revision",
                gave_up=REVISION_GAVE_UP,
            )
        )
        # A studio document is read by every reader of its notebook (sharing/access.py), so
        # are its citations; the citation lookup under every page picture finds them here.
        register(
            "document_citation",
            lambda user, notebook: DocumentCitation.objects.filter(document__notebook=notebook),
        )
