"""Which of a notebook's sources a person has ticked there, and so what their questions and
generated documents search (None: everything; with any source unticked, only the ticked
ones). Stored as the sources they unticked (UntickedSource), so a new source is ticked for
everyone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from library.models import Source
from notebooks.models import Notebook, UntickedSource
from sharing import access
from texts.errors import UserFacingError


@dataclass(frozen=True)
class SourceChoice:
    """Which of a notebook's listed sources (uploads, web pages, notes made sources; not
    generated documents, which live in the studio) one person has ticked there."""

    listed: list[Source]
    unticked: frozenset[int]

    @property
    def usable(self) -> list[Source]:
        """The listed sources a question can use: not those that failed to be read (they
        hold no text; the page shows them unticked, and "All N sources" leaves them out)."""
        return [source for source in self.listed if source.status != Source.Status.FAILED]

    @property
    def ticked(self) -> list[Source]:
        return [source for source in self.usable if source.pk not in self.unticked]

    @property
    def everything(self) -> bool:
        return not self.unticked & {source.pk for source in self.usable}

    @property
    def searched(self) -> list[int] | None:
        """The ids a question or document is limited to; None: all (nothing unticked).

        With any source unticked, generated documents are left out too: they restate the
        sources they were made from, the unticked ones among them."""
        return None if self.everything else [source.pk for source in self.ticked]


def listed_sources(notebook: Notebook) -> QuerySet[Source]:
    """The sources the notebook's list shows (and ticks): not its generated documents."""
    return access.notebook_sources(notebook).exclude(kind=Source.Kind.GENERATED)


def source_choice(*, user: User, notebook: Notebook) -> SourceChoice:
    unticked = UntickedSource.objects.filter(user=user, notebook=notebook)
    return SourceChoice(
        listed=list(listed_sources(notebook).order_by("-created_at", "-id")),
        unticked=frozenset(unticked.values_list("source_id", flat=True)),
    )


@dataclass(frozen=True)
class AskedSources:
    """A notebook's sources (its generated documents too) and the ids a person's question
    there searches (None: all; `SourceChoice.searched`)."""

    sources: Sequence[Source]
    searched: list[int] | None


# sources_to_ask's statement: access.notebook_sources(notebook) (the notebook's live links,
# newest source first, as Source orders them) with, for each, whether the reader unticked
# it. Written out, not built by the ORM: building that queryset took twice as long as
# running it, on the way to every answer's first token (bench/README.md, streaming
# overhead). sharing/access.py's rule in SQL says which links count (and, again, that the
# reader may read the notebook); notebooks/tests/test_choose_sources.py checks that this
# and the querysets agree.
_SOURCES_TO_ASK_SQL = f"""
SELECT s.*, EXISTS (
    SELECT 1 FROM notebooks_untickedsource u
    WHERE u.notebook_id = ns.notebook_id AND u.source_id = s.id AND u.user_id = %(reader)s
) AS unticked
FROM notebooks_notebooksource ns JOIN library_source s ON s.id = ns.source_id
WHERE ns.notebook_id = %(notebook)s AND {access.searchable_link_sql(link="ns", source="s")}
ORDER BY s.created_at DESC
"""


def sources_to_ask(*, user: User, notebook: Notebook) -> AskedSources:
    """The notebook's sources with what `user` ticked of them, in one statement: a
    question's way to its first token counts them (notebooks/tests/test_ask_stream_queries.py),
    and needs both, the sources to refuse a notebook with none ready and the choice to search."""
    params = {"notebook": notebook.pk, "reader": user.pk}
    sources = list(Source.objects.raw(_SOURCES_TO_ASK_SQL, params))
    listed = [source for source in sources if source.kind != Source.Kind.GENERATED]
    # `unticked`: the statement's own column, which the raw query sets on each source.
    unticked = {source.pk for source in listed if source.unticked}  # type: ignore[attr-defined]
    if not unticked:
        return AskedSources(sources=sources, searched=None)
    searched = sorted(source.pk for source in listed if source.pk not in unticked)
    return AskedSources(sources=sources, searched=searched)


def choose_sources(*, user: User, notebook: Notebook, ticked: Iterable[int]) -> SourceChoice:
    """Remember which of the notebook's sources `user` uses there: `ticked`, every other
    listed one unticked. UserFacingError naming ids that are not the notebook's."""
    ticked = set(ticked)
    listed = set(listed_sources(notebook).values_list("pk", flat=True))
    if unknown := ticked - listed:
        raise UserFacingError(
            _("This notebook has no source %(ids)s.")
            % {"ids": ", ".join(str(pk) for pk in sorted(unknown))}
        )
    with transaction.atomic():
        UntickedSource.objects.filter(user=user, notebook=notebook).delete()
        UntickedSource.objects.bulk_create(
            UntickedSource(user=user, notebook=notebook, source_id=pk)
            for pk in sorted(listed - ticked)
        )
    return source_choice(user=user, notebook=notebook)


def parse_source_ids(text: str, *, notebook: Notebook) -> list[int]:
    """`--sources ID,ID` of a command: the ids, each one of the notebook's sources (a
    generated document's too: named, it is searched like the others); UserFacingError otherwise."""
    pieces = [piece.strip() for piece in text.split(",") if piece.strip()]
    if not pieces or not all(piece.isdigit() for piece in pieces):
        raise UserFacingError(f"--sources takes source ids separated by commas, not {text!r}.")
    ids = sorted({int(piece) for piece in pieces})
    known = set(access.notebook_sources(notebook).filter(pk__in=ids).values_list("pk", flat=True))
    if missing := [pk for pk in ids if pk not in known]:
        raise UserFacingError(
            f"The notebook has no source {', '.join(map(str, missing))}; "
            "`manage.py notes` and the notebook page list its sources' ids."
        )
    return ids
