"""stream_answer checks the credit itself unless its caller says it just has (the
streaming view's @credit_required, so the credit is summed once before the model call)."""

import pytest

from billing.models import Usage
from billing.services import CreditSpent, balance, grant_credit
from generation.answering import stream_answer
from generation.tests.passages import HERONS
from notebooks.models import Message


def test_a_direct_caller_is_refused_before_any_model_call_once_the_credit_is_spent(
    fake_openai, owner, notebook, add_ready_source
):
    add_ready_source(notebook, HERONS, "herons.txt")
    grant_credit(user=owner, amount=-balance(owner), reason="spent in a test")
    calls = Usage.objects.count()

    with pytest.raises(CreditSpent):
        next(stream_answer(user=owner, notebook=notebook, question="Where do herons wait?"))

    assert Usage.objects.count() == calls
    assert fake_openai.chat_requests == []
    assert not Message.objects.exists()
