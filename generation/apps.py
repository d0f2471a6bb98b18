from django.apps import AppConfig


class GenerationConfig(AppConfig):
    name = "generation"

    def ready(self) -> None:
        # A studio document is read by every reader of its notebook (sharing/access.py), so
        # are its citations; the citation lookup under every page picture finds them here.
        from citations.lookup import register
        from generation.documents.models import DocumentCitation

        register(
            "document_citation",
            lambda user, notebook: DocumentCitation.objects.filter(document__notebook=notebook),
        )
