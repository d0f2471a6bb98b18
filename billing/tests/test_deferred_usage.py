"""Usage rows recorded inside `deferred_usage` are written when the block ends, also when it
raises: a streamed answer bills the question's embedding while the model thinks."""

import pytest

from billing.models import CreditEntry, Usage
from billing.services import balance, deferred_usage, record_usage, usage_for


def test_rows_recorded_in_the_block_are_written_when_it_ends(owner, notebook, settings):
    settings.MODEL_PRICES = {"fake-embed": {"input_per_million": "0.1"}}
    before = balance(owner)
    with usage_for(notebook_id=notebook.pk) as billed:
        with deferred_usage():
            usage = record_usage(
                user=owner, kind="embedding", model="fake-embed", input_tokens=1_000_000
            )
            assert usage.pk is None and not Usage.objects.exists()
            assert balance(owner) == before
        assert billed.usage_ids == [usage.pk]

    row = Usage.objects.get()
    assert (row.notebook_id, row.input_tokens) == (notebook.pk, 1_000_000)
    debit = CreditEntry.objects.get(kind=CreditEntry.Kind.DEBIT)
    assert debit.usage == row and debit.amount == -row.cost
    assert balance(owner) == before - row.cost


def test_rows_are_written_when_the_block_raises(owner):
    with pytest.raises(RuntimeError), deferred_usage():
        record_usage(user=owner, kind="embedding", model="fake-embed", input_tokens=3)
        raise RuntimeError("the chat request failed")

    assert Usage.objects.get().input_tokens == 3


def test_outside_the_block_a_row_is_written_at_once(owner):
    usage = record_usage(user=owner, kind="embedding", model="fake-embed", input_tokens=3)

    assert usage.pk is not None and Usage.objects.get() == usage
