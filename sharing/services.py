"""Sharing notebooks and publishing sources, each act written to the audit log in the same
transaction. Who may do what is sharing/access.py's; these functions check it again, so a
command or admin action cannot skip it."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from library.models import Source
from notebooks.models import Notebook, NotebookSource
from sharing import access
from sharing.models import AuditEvent, Membership, Role
from texts.errors import UserFacingError


class SharingError(UserFacingError):
    """A request to share that cannot be done as asked; the message says why."""


def _audit(
    action: str,
    *,
    actor: User,
    notebook: Notebook | None = None,
    source: Source | None = None,
    member: User | None = None,
    role: str = "",
) -> AuditEvent:
    subject = notebook.title if notebook is not None else source.title if source else ""
    return AuditEvent.objects.create(
        action=action,
        actor=actor,
        actor_name=actor.get_username(),
        notebook=notebook,
        source=source,
        subject=subject[:500],
        member=member,
        member_name=member.get_username() if member else "",
        role=role,
    )


def find_person(name_or_email: str) -> User:
    """The active account with this user name, or with this e-mail address if exactly one
    has it."""
    wanted = name_or_email.strip()
    if not wanted:
        raise SharingError(_("Enter the user name or e-mail address of the person to share with."))
    people = get_user_model().objects.filter(is_active=True)
    person = people.filter(username=wanted).first()
    if person is None and "@" in wanted:
        matches = list(people.filter(email__iexact=wanted)[:2])
        if len(matches) > 1:
            raise SharingError(
                _("More than one account uses %(email)s: enter the user name instead.")
                % {"email": wanted}
            )
        person = matches[0] if matches else None
    if person is None:
        raise SharingError(
            _("There is no account called “%(name)s”. Check the spelling, or ask them to sign up.")
            % {"name": wanted}
        )
    return person


def share(*, notebook: Notebook, actor: User, person: User, role: str) -> Membership:
    """Give `person` `role` in the owner's notebook; sharing again changes the role."""
    if not access.allows(access.role_of(actor, notebook), Role.OWNER):
        raise PermissionDenied(access.denial(Role.OWNER))
    if role not in (Role.EDITOR, Role.VIEWER):
        raise SharingError(_("Choose whether they can edit or only view."))
    if person.pk == notebook.owner_id:
        raise SharingError(_("You own this notebook already."))
    with transaction.atomic():
        membership = (
            Membership.objects.select_for_update().filter(notebook=notebook, user=person).first()
        )
        if membership is None:
            membership = Membership.objects.create(
                notebook=notebook, user=person, role=role, added_by=actor
            )
            _audit(
                AuditEvent.Action.SHARED, actor=actor, notebook=notebook, member=person, role=role
            )
        elif membership.role != role:
            membership.role = role
            membership.save(update_fields=["role", "updated_at"])
            _audit(
                AuditEvent.Action.ROLE_CHANGED,
                actor=actor,
                notebook=notebook,
                member=person,
                role=role,
            )
    return membership


def revoke(*, notebook: Notebook, actor: User, person: User) -> bool:
    """End `person`'s access to the notebook: their next request is refused. Sources they
    added stay (they lent them to the notebook); their unposted conversations stay theirs,
    unread by anyone, and come back if the notebook is shared with them again. The owner
    revokes anyone; a member may leave."""
    if actor.pk != person.pk and not access.allows(access.role_of(actor, notebook), Role.OWNER):
        raise PermissionDenied(access.denial(Role.OWNER))
    with transaction.atomic():
        deleted, _rows = Membership.objects.filter(notebook=notebook, user=person).delete()
        if deleted:
            _audit(AuditEvent.Action.REVOKED, actor=actor, notebook=notebook, member=person)
    return bool(deleted)


def publish(*, source: Source, actor: User) -> None:
    if not access.may_publish(actor):
        raise PermissionDenied(_("Publishing to the public library needs a contributor's rights."))
    if source.status != Source.Status.READY:
        raise SharingError(_("Only a ready source can be published: wait until it is read."))
    if not access.publishable_sources(actor).filter(pk=source.pk).exists():
        raise PermissionDenied(_("You can publish only your own sources."))
    with transaction.atomic():
        Source.objects.filter(pk=source.pk).update(
            public=True, published_by=actor, published_at=timezone.now()
        )
        _audit(AuditEvent.Action.PUBLISHED, actor=actor, source=source)
    source.refresh_from_db()


def unpublish(*, source: Source, actor: User) -> None:
    """Take a source out of the public library. Notebooks that took it from there lose it
    at once (their links are no longer live, sharing/access.py); the publisher's own
    notebooks keep it."""
    if not access.unpublishable_sources(actor).filter(pk=source.pk).exists():
        raise PermissionDenied(_("Only whoever published this source, or staff, can unpublish it."))
    with transaction.atomic():
        Source.objects.filter(pk=source.pk).update(
            public=False, published_by=None, published_at=None
        )
        _audit(AuditEvent.Action.UNPUBLISHED, actor=actor, source=source)
    source.refresh_from_db()


def notebook_history(notebook: Notebook) -> list[AuditEvent]:
    """The notebook's sharing record, newest first, for its owner."""
    return list(AuditEvent.objects.filter(notebook=notebook)[:50])


def link_source(*, notebook: Notebook, source: Source, user: User) -> bool:
    """Put a source `user` may link (their own, or a public one) into a notebook they may
    edit; nothing is read or embedded again. False when it was there already."""
    if not access.editable_notebooks(user).filter(pk=notebook.pk).exists():
        raise PermissionDenied(_("You cannot add sources to this notebook."))
    if not access.linkable_sources(user).filter(pk=source.pk).exists():
        raise PermissionDenied(_("You can add only your own sources and public ones."))
    with transaction.atomic():
        link, created = NotebookSource.objects.select_for_update().get_or_create(
            notebook=notebook, source=source, defaults={"added_by": user}
        )
        if not created and link.added_by_id != source.owner_id and user.pk == source.owner_id:
            # The owner's own link outlives a publication that someone else's did not.
            link.added_by = user
            link.save(update_fields=["added_by"])
            return True
    return created


def public_library(*, query: str = "") -> QuerySet[Source]:
    """The public library, newest first; with `query`, the sources whose title, summary or
    text holds it (each source's text in its own language's configuration)."""
    sources = access.public_sources().select_related("published_by").order_by("-published_at")
    if not query.strip():
        return sources
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT c.source_id FROM library_chunk c "
            "JOIN library_source s ON s.id = c.source_id "
            "WHERE s.public AND c.search_vector @@ "
            "websearch_to_tsquery(s.search_config::regconfig, %s) LIMIT 1000",
            [query],
        )
        in_text = [row[0] for row in cursor.fetchall()]
    return sources.filter(
        Q(title__icontains=query) | Q(summary__icontains=query) | Q(pk__in=in_text)
    )
