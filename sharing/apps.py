from django.apps import AppConfig


class SharingConfig(AppConfig):
    name = "sharing"

    def ready(self) -> None:
        # Who may see an answer's or a note's citation is decided here (access.py): the
        # citation lookup under every page picture asks through these.
        from citations.lookup import register
        from sharing import access

        register("citation", access.visible_citations)
        register("note_citation", access.visible_note_citations)
