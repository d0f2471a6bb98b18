"""Who may see and change which notebooks, sources and conversations: the one place that
decides. Views, commands, admin actions and retrieval's SQL statement all ask here, so the
rules can be read (and proved on every URL, sharing/tests) in one page:

- A notebook is read by its owner and the people it is shared with (Membership: viewer or
  editor); editors and the owner also add sources, ask and generate; only the owner shares.
  Anyone else gets a 404, as if the notebook did not exist; a member asking for more than
  their role allows gets a 403 naming what the role lacks.
- A notebook's sources are its links (NotebookSource) that are live: the source's owner put
  it there (their own file), or it is in the public library. A link made from the public
  library dies with the publication, so unpublishing takes a source out of other people's
  notebooks at once, and their old citations show "source removed".
- A source in the public library is read by every signed-in person; it is changed (read
  again) and unpublished only by whoever published it, or staff. Publishing needs staff or
  the `library.publish_source` permission, and the source must be ready.
- A conversation is its author's, and is read by the notebook's other readers only once
  posted to the notebook; only the author asks in it, renames, posts or deletes it.
- A generated document is read by the notebook's readers; it is retried or deleted by
  whoever made it, or the notebook's owner.
- A note is its author's, as a conversation is: read by the notebook's other readers once
  posted; only its author (an owner or editor of the notebook) writes, changes, posts,
  deletes it, saves answers to notes, and makes it a source of the notebook, which every
  reader of the notebook then reads and searches like any other.
Whoever acts pays: the views pass the signed-in person, never the owner, to every billed call.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import F, Q, QuerySet
from django.http import Http404
from django.utils.translation import gettext as _

from library.models import Source
from notebooks.models import (
    Citation,
    Conversation,
    ConversationQuerySet,
    Message,
    Note,
    Notebook,
    NotebookSource,
    NoteCitation,
)
from sharing.models import Membership, Role
from texts.errors import UserFacingError

AnyUser = User | AnonymousUser

# What each role may do, from least to most.
_RANK = {Role.VIEWER: 0, Role.EDITOR: 1, Role.OWNER: 2}


def live_link(through: str = "") -> Q:
    """A link that counts: its source's owner made it, or the source is public. `through`
    names the relation to NotebookSource when filtering another model ("notebooksource"
    from Notebook, for annotations)."""
    at = f"{through}__" if through else ""
    return Q(**{f"{at}source__public": True}) | Q(
        **{f"{at}source__owner_id": F(f"{at}added_by_id")}
    )


LIVE_LINK = live_link()


def _signed_in(user: AnyUser) -> bool:
    return bool(user and user.is_authenticated and user.is_active)


def _id(user: AnyUser) -> int:
    # Only called once _signed_in(user) held: an account, with an id.
    return int(user.pk)  # type: ignore[arg-type]


# Notebooks ------------------------------------------------------------------------------


def readable_notebooks(user: AnyUser) -> QuerySet[Notebook]:
    """The notebooks `user` may open: their own and those shared with them."""
    if not _signed_in(user):
        return Notebook.objects.none()
    shared = Membership.objects.filter(user_id=_id(user)).values("notebook_id")
    return Notebook.objects.filter(Q(owner_id=_id(user)) | Q(pk__in=shared))


def editable_notebooks(user: AnyUser) -> QuerySet[Notebook]:
    """The notebooks `user` may add sources to, ask in and generate from."""
    if not _signed_in(user):
        return Notebook.objects.none()
    shared = Membership.objects.filter(user_id=_id(user), role=Role.EDITOR).values("notebook_id")
    return Notebook.objects.filter(Q(owner_id=_id(user)) | Q(pk__in=shared))


def shared_with(user: AnyUser) -> QuerySet[Notebook]:
    """Other people's notebooks shared with `user` (the "shared with me" list)."""
    if not _signed_in(user):
        return Notebook.objects.none()
    return Notebook.objects.filter(memberships__user_id=_id(user)).exclude(owner_id=_id(user))


def role_of(user: AnyUser, notebook: Notebook) -> Role | None:
    if not _signed_in(user):
        return None
    if notebook.owner_id == user.pk:
        return Role.OWNER
    role = Membership.objects.filter(notebook=notebook, user_id=_id(user)).values_list(
        "role", flat=True
    )
    found = role.first()
    return Role(found) if found else None


def allows(role: Role | None, need: Role) -> bool:
    return role is not None and _RANK[role] >= _RANK[need]


# get_notebook's statement: the notebook and the reader's role there (their membership's;
# none for its owner or anyone else). Written out: every request runs it, also before a
# streamed answer's first token, and building it as a queryset took longer than running it
# (bench/README.md, streaming overhead). The owner of a notebook shared with the reader is
# read when a page shows their name.
_NOTEBOOK_SQL = """
SELECT n.*, (
    SELECT m.role FROM sharing_membership m
    WHERE m.notebook_id = n.id AND m.user_id = %(reader)s
    LIMIT 1
) AS member_role
FROM notebooks_notebook n
WHERE n.id = %(notebook)s
"""
_LARGEST_ID = 2**63 - 1  # a bigint's; a larger number names no notebook


def get_notebook(user: AnyUser, notebook_id: int | str, need: Role = Role.VIEWER) -> Notebook:
    """The notebook, if `user` may do what `need` stands for in it.

    Http404 for anyone who may not read it, so other people's notebooks cannot be told apart
    from ones that do not exist; PermissionDenied for a member whose role is too small (they
    know the notebook exists: saying why is kinder than pretending it does not)."""
    if not str(notebook_id).isdigit():
        raise Http404("No such notebook.")
    if not _signed_in(user) or int(notebook_id) > _LARGEST_ID:
        raise Http404("No such notebook.")
    # One statement for the notebook and the reader's membership; "readable" is decided
    # here from the two, as readable_notebooks() decides it: the owner, or a member (any
    # role).
    found = list(
        Notebook.objects.raw(_NOTEBOOK_SQL, {"notebook": int(notebook_id), "reader": _id(user)})
    )
    notebook = found[0] if found else None
    if notebook is None:
        raise Http404("No such notebook.")
    member_role: str | None = notebook.member_role  # type: ignore[attr-defined]  # its column
    if notebook.owner_id == _id(user):
        role = Role.OWNER
        if isinstance(user, User):
            notebook.owner = user  # the reader: their row is not read again
    elif member_role:
        role = Role(member_role)
    else:
        raise Http404("No such notebook.")
    if not allows(role, need):
        raise PermissionDenied(denial(need))
    notebook.role = role or ""  # for the templates: what to offer this reader
    return notebook


def find_notebook(user: AnyUser, title: str, need: Role = Role.VIEWER) -> Notebook | None:
    """The notebook a command names by title: the user's own, else one shared with them;
    None when there is neither. UserFacingError (saying why) when several shared notebooks have
    that title, or the user's role there does not allow `need`."""
    found = list(
        readable_notebooks(user).filter(title=title).select_related("owner").order_by("pk")
    )
    own = [notebook for notebook in found if notebook.owner_id == user.pk]
    if len(found) > 1 and not own:
        owners = ", ".join(sorted(notebook.owner.get_username() for notebook in found))
        raise UserFacingError(
            f"More than one notebook called {title!r} is shared with {user.get_username()} "
            f"(owners: {owners})."
        )
    if not found:
        return None
    notebook = (own or found)[0]
    role = role_of(user, notebook)
    if not allows(role, need):
        raise UserFacingError(denial(need))
    notebook.role = role or ""
    return notebook


def denial(need: Role) -> str:
    if need == Role.OWNER:
        return _("Only the notebook's owner can do this.")
    return _("You can read this notebook but not change it: ask its owner to make you an editor.")


# Sources --------------------------------------------------------------------------------


def notebook_links(notebook: Notebook) -> QuerySet[NotebookSource]:
    """The notebook's live links to sources."""
    return NotebookSource.objects.filter(notebook=notebook).filter(LIVE_LINK)


def notebook_sources(notebook: Notebook) -> QuerySet[Source]:
    """The sources a notebook holds (for every reader of the notebook alike)."""
    return Source.objects.filter(pk__in=notebook_links(notebook).values("source_id"))


def public_sources() -> QuerySet[Source]:
    """The public library: what every signed-in person may read and add to a notebook."""
    return Source.objects.filter(public=True, status=Source.Status.READY)


def readable_sources(user: AnyUser) -> QuerySet[Source]:
    """Every source `user` may read: their own, the public library's, and the sources of
    the notebooks they may open."""
    if not _signed_in(user):
        return Source.objects.none()
    in_notebooks = NotebookSource.objects.filter(LIVE_LINK).filter(
        notebook__in=readable_notebooks(user)
    )
    return Source.objects.filter(
        Q(owner_id=_id(user)) | Q(public=True) | Q(pk__in=in_notebooks.values("source_id"))
    )


def changeable_sources(user: AnyUser) -> QuerySet[Source]:
    """The sources `user` may read again (or retry): their own while private; a public one
    only if they published it, or are staff."""
    if not _signed_in(user):
        return Source.objects.none()
    mine = Q(owner_id=_id(user), public=False) | Q(public=True, published_by_id=_id(user))
    return Source.objects.filter(mine | Q(public=True) if user.is_staff else mine)


def require_changeable(user: AnyUser, source: Source) -> None:
    """PermissionDenied unless `user` may read `source` again (changeable_sources)."""
    if not changeable_sources(user).filter(pk=source.pk).exists():
        raise PermissionDenied(_("Only whoever added this source can read it again."))


def may_publish(user: AnyUser) -> bool:
    return _signed_in(user) and (user.is_staff or user.has_perm("library.publish_source"))


def publishable_sources(user: AnyUser) -> QuerySet[Source]:
    """The sources `user` may publish: their own ready uploads (staff: anyone's)."""
    if not may_publish(user):
        return Source.objects.none()
    ready = Source.objects.filter(status=Source.Status.READY, public=False).exclude(
        kind__in=[Source.Kind.GENERATED, Source.Kind.NOTE]
    )
    return ready if user.is_staff else ready.filter(owner_id=_id(user))


def unpublishable_sources(user: AnyUser) -> QuerySet[Source]:
    if not _signed_in(user):
        return Source.objects.none()
    public = Source.objects.filter(public=True)
    return public if user.is_staff else public.filter(published_by_id=_id(user))


def linkable_sources(user: AnyUser) -> QuerySet[Source]:
    """The sources `user` may put into a notebook they edit: their own and public ones."""
    if not _signed_in(user):
        return Source.objects.none()
    return Source.objects.filter(Q(owner_id=_id(user)) | Q(public=True, status=Source.Status.READY))


# Conversations and generated documents --------------------------------------------------


def visible_messages(user: AnyUser, notebook: Notebook) -> QuerySet[Message]:
    """The messages of the notebook's conversations `user` may read."""
    return Message.objects.filter(conversation__in=visible_conversations(user, notebook))


def visible_conversations(user: AnyUser, notebook: Notebook) -> ConversationQuerySet:
    """The notebook's conversations `user` may read: their own and the posted ones (the
    notebook itself already checked)."""
    if not _signed_in(user):
        return Conversation.objects.none()
    return Conversation.objects.filter(notebook=notebook).filter(
        Q(user_id=_id(user)) | Q(posted=True)
    )


def own_conversations(user: AnyUser, notebook: Notebook) -> ConversationQuerySet:
    """The conversations `user` may ask in, rename, post and delete."""
    if not _signed_in(user):
        return Conversation.objects.none()
    return Conversation.objects.filter(notebook=notebook, user_id=_id(user))


def visible_notes(user: AnyUser, notebook: Notebook) -> QuerySet[Note]:
    """The notebook's notes `user` may read: their own and the posted ones (the notebook
    itself already checked)."""
    if not _signed_in(user):
        return Note.objects.none()
    return Note.objects.filter(notebook=notebook).filter(Q(user_id=_id(user)) | Q(posted=True))


def own_notes(user: AnyUser, notebook: Notebook) -> QuerySet[Note]:
    """The notes `user` may change, post, delete and make sources: their own, in a notebook
    they may edit (a viewer who was an editor keeps reading theirs, changing none)."""
    if not _signed_in(user) or not editable_notebooks(user).filter(pk=notebook.pk).exists():
        return Note.objects.none()
    return Note.objects.filter(notebook=notebook, user_id=_id(user))


def visible_citations(user: AnyUser, notebook: Notebook) -> QuerySet[Citation]:
    """The citations of the answers `user` may read in the notebook."""
    return Citation.objects.filter(message__conversation__in=visible_conversations(user, notebook))


def visible_note_citations(user: AnyUser, notebook: Notebook) -> QuerySet[NoteCitation]:
    """The citations of the notes `user` may read in the notebook."""
    return NoteCitation.objects.filter(note__in=visible_notes(user, notebook))


def may_manage_document(user: AnyUser, notebook: Notebook, document) -> bool:
    """Retry or delete a generated document: its maker, or the notebook's owner."""
    return _signed_in(user) and user.pk in (document.owner_id, notebook.owner_id)


# The same rules in SQL, for retrieval's single statement --------------------------------


def searchable_link_sql(*, link: str, source: str, reader_param: str = "reader") -> str:
    """A condition for a statement that joins `notebooks_notebooksource` as `link` to
    `library_source` as `source`: the link is live (LIVE_LINK) and the person named by the
    statement's `%(reader_param)s` parameter may read its notebook (readable_notebooks).
    sharing/tests/test_access_sql.py checks that it and the querysets above agree."""
    reader = f"%({reader_param})s"
    return f"""(
        ({source}.public OR {source}.owner_id = {link}.added_by_id)
        AND EXISTS (
            SELECT 1 FROM notebooks_notebook n
            WHERE n.id = {link}.notebook_id AND n.owner_id = {reader}
            UNION ALL
            SELECT 1 FROM sharing_membership m
            WHERE m.notebook_id = {link}.notebook_id AND m.user_id = {reader}
        )
    )"""
