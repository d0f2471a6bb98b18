"""Metering model calls, pricing them and paying for them from the users' credit.

Every provider calls `record_usage` once per model call. Billed actions (upload, ask,
re-process) check `has_credit` before they start.

Racing at the edge of the credit: the check and the debits are not one transaction (an
answer makes two model calls, a PDF dozens, over seconds or minutes), so two actions that
both pass the check while a little credit is left are both carried out and both debited.
The balance then goes below zero, by at most what the actions in flight cost; the next
check refuses. Locking the balance for the length of an action would serialise a user's
work for that small, bounded overdraft (billing/tests/test_credit_race.py).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Sum
from django.db.models.functions import TruncDate

from billing.models import CreditBalance, CreditEntry, Usage
from billing.prices import price_for
from texts import Text, columns

logger = logging.getLogger(__name__)


class CreditSpent(Exception):
    """The user has no credit left for a billed action."""

    def __init__(self, user: User | None = None) -> None:
        super().__init__(credit_spent_message())
        self.user = user


def credit_spent_text() -> Text:
    """Why a billed action cannot start, to store (a worker's source or document fails
    with it) and show in the reader's language."""
    return Text(
        "Your credit is spent, so Loupe cannot call its models for you. "
        "Please ask %(contact)s for more credit.",
        contact=settings.CREDIT_CONTACT,
    )


def credit_spent_message() -> str:
    """The same, in the active language, for a response."""
    return credit_spent_text().translated()


@dataclass
class _Purpose:
    """What the model calls in a `usage_for` block are for, and the rows they wrote."""

    source_id: int | None = None
    notebook_id: int | None = None
    message_id: int | None = None
    usage_ids: list[int] = field(default_factory=list)

    def attach(self, *, message_id: int) -> None:
        """Point the rows written so far at a message that exists only after the calls."""
        Usage.objects.filter(pk__in=self.usage_ids).update(message_id=message_id)


_purpose: contextvars.ContextVar[_Purpose | None] = contextvars.ContextVar(
    "billing_purpose", default=None
)


@dataclass
class _Pending:
    usage: Usage
    debit: CreditEntry | None
    purpose: _Purpose | None


_deferred: contextvars.ContextVar[list[_Pending] | None] = contextvars.ContextVar(
    "billing_deferred", default=None
)


@contextlib.contextmanager
def usage_for(
    *, source_id: int | None = None, notebook_id: int | None = None
) -> Iterator[_Purpose]:
    """Usage rows written inside the block record what they were for.

    The providers deep down know only the user; the service that starts an action knows
    the source or notebook, and says so once here instead of threading it through every
    call. A nested block keeps what the outer one said unless it says otherwise.
    """
    outer = _purpose.get()
    purpose = _Purpose(
        source_id=source_id or (outer.source_id if outer else None),
        notebook_id=notebook_id or (outer.notebook_id if outer else None),
    )
    token = _purpose.set(purpose)
    try:
        yield purpose
    finally:
        _purpose.reset(token)
        if outer is not None:
            outer.usage_ids.extend(purpose.usage_ids)


def record_usage(
    *,
    user: User | None,
    kind: str,
    model: str,
    input_tokens: int = 0,
    output_tokens: int = 0,
    seconds: Decimal | float = 0,
    images: int = 0,
    source_id: int | None = None,
    notebook_id: int | None = None,
    message_id: int | None = None,
) -> Usage:
    """Write the usage row of one model call, priced now, and debit the user's credit.

    Call it as soon as the provider has answered (it has billed the call), before the
    answer is checked, so a billed call that turns out useless is still recorded.
    What the call was for defaults to the enclosing `usage_for` block. Inside a
    `deferred_usage` block the row is written when that block ends.
    """
    price = price_for(model)
    if price is None:
        # The start-up check refuses unpriced configured models; this is a model chosen
        # some other way (a test, a setting changed at run time). Record it, visibly free.
        logger.warning("model %s has no price (MODEL_PRICES); its usage is recorded at 0", model)
        cost = Decimal(0)
    else:
        cost = price.cost(
            input_tokens=input_tokens, output_tokens=output_tokens, seconds=seconds, images=images
        )
    purpose = _purpose.get()
    billed_user = user if user is not None and user.pk else None
    usage = Usage(
        user=billed_user,
        kind=kind,
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        seconds=Decimal(str(seconds)),
        images=images,
        cost=cost,
        source_id=source_id or (purpose.source_id if purpose else None),
        notebook_id=notebook_id or (purpose.notebook_id if purpose else None),
        message_id=message_id,
    )
    debit = None
    if billed_user is not None and cost:
        debit = CreditEntry(
            user=billed_user, kind=CreditEntry.Kind.DEBIT, amount=-cost, reason=f"{kind} {model}"
        )
    pending = _Pending(usage, debit, purpose)
    deferred = _deferred.get()
    if deferred is not None:
        deferred.append(pending)  # written when the deferred_usage block ends
    else:
        _write([pending])
    return usage


def _write(rows: list[_Pending]) -> None:
    with transaction.atomic():
        for row in rows:
            row.usage.save(force_insert=True)
            if row.debit is not None:
                row.debit.usage = row.usage
                row.debit.save(force_insert=True)
    for row in rows:
        if row.purpose is not None:
            row.purpose.usage_ids.append(row.usage.pk)


@contextlib.contextmanager
def deferred_usage() -> Iterator[None]:
    """Usage rows recorded inside the block are written when it ends, always (also when it
    raises), in one transaction; until then the Usage that record_usage returns is unsaved.

    For the calls before a streamed answer's chat request (the question's embedding, a
    rewrite): ending the block after that request has gone out writes them while the model
    thinks, instead of before asking it (bench/README.md, streaming overhead). A crash in
    between loses them, as a crash between a provider's answer and an immediate write would.
    Must not stay open across a yield (a context variable, like usage_for)."""
    rows: list[_Pending] = []
    token = _deferred.set(rows)
    try:
        yield
    finally:
        _deferred.reset(token)
        if rows:
            _write(rows)


def grant_starting_credit(user: User) -> None:
    """Give the user the starting credit, once (a second call does nothing)."""
    if CreditEntry.objects.filter(user=user, kind=CreditEntry.Kind.START).exists():
        return
    try:
        with transaction.atomic():
            CreditEntry.objects.create(
                user=user,
                kind=CreditEntry.Kind.START,
                amount=settings.STARTING_CREDIT,
                **columns("reason", Text("Starting credit")),
            )
    except IntegrityError:
        pass  # granted a moment ago by a concurrent request


def balance(user: User) -> Decimal:
    # One row, kept by the database as each credit entry is written (CreditBalance): every
    # billed request asks, before its model calls. Users who existed before billing get
    # their starting credit the first time it matters.
    row = _balance_row(user)
    if row is None or not row[1]:
        grant_starting_credit(user)
        row = _balance_row(user)
    return row[0] if row is not None else Decimal(0)


def _balance_row(user: User) -> tuple[Decimal, bool] | None:
    """The user's balance and whether their starting credit was granted; None: no row yet.
    Written out: building the queryset took twice as long as this one-row read, on the way
    to every streamed answer's first token (bench/README.md, streaming overhead)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT amount, started FROM {CreditBalance._meta.db_table} WHERE user_id = %s",
            [user.pk],
        )
        return cursor.fetchone()


def has_credit(user: User | None) -> bool:
    """The user may start a billed action: the balance is above zero.

    Calls without a user (system work) are not gated.
    """
    if user is None or not user.pk:
        return True
    return balance(user) > 0


def require_credit(user: User | None) -> None:
    """Raise CreditSpent unless the user may start a billed action."""
    if not has_credit(user):
        raise CreditSpent(user)


def grant_credit(*, user: User, amount: Decimal, reason: str = "") -> CreditEntry:
    """Add credit to the user's ledger (a negative amount takes some away)."""
    grant_starting_credit(user)  # a grant tops the starting credit up, never replaces it
    # A reason an admin typed is shown as typed; the default one in the reader's language.
    return CreditEntry.objects.create(
        user=user,
        kind=CreditEntry.Kind.GRANT,
        amount=amount,
        **columns("reason", reason or Text("Granted")),
    )


def usage_summary(*, user: User | None = None, since: date | None = None) -> list[dict[str, Any]]:
    """Usage totals per day, user, kind and model, newest day first."""
    rows = Usage.objects.all()
    if user is not None:
        rows = rows.filter(user=user)
    if since is not None:
        rows = rows.filter(created_at__date__gte=since)
    grouped = (
        rows.annotate(day=TruncDate("created_at"))
        .values("day", "user__username", "kind", "model")
        .annotate(
            calls=Count("id"),
            input_tokens=Sum("input_tokens"),
            output_tokens=Sum("output_tokens"),
            seconds=Sum("seconds"),
            images=Sum("images"),
            cost=Sum("cost"),
        )
        .order_by("-day", "user__username", "kind", "model")
    )
    return [dict(row) for row in grouped]


def usage_totals(*, user: User | None = None, since: date | None = None) -> dict[str, Any]:
    rows = Usage.objects.all()
    if user is not None:
        rows = rows.filter(user=user)
    if since is not None:
        rows = rows.filter(created_at__date__gte=since)
    return rows.aggregate(calls=Count("id"), cost=Sum("cost", default=Decimal(0)))
