"""The model's JSON: asked for with response_format, parsed, repaired once; a second bad
reply fails the document with a message, and every call is billed."""

import pytest

from billing.models import Usage
from generation.documents.models import GeneratedDocument
from generation.documents.structured import InvalidOutput, parse
from generation.tests.studio.conftest import reply

GOOD_TABLE = {"title": "T", "columns": ["What"], "rows": [{"cells": ["95 cm"], "source": "[1]"}]}


def test_invalid_json_is_repaired_by_one_more_call_that_is_shown_the_error(
    fake_openai, studio_sources, make_document
):
    fake_openai.chat_replies += ["Here is your table: {not json", reply(GOOD_TABLE)]

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.READY, document.error
    first, repair = fake_openai.chat_requests
    assert repair.body["messages"][-2] == {
        "role": "assistant",
        "content": "Here is your table: {not json",
    }
    assert "not JSON" in repair.body["messages"][-1]["content"]
    assert Usage.objects.filter(kind="chat").count() == 2


def test_a_repair_that_would_not_fit_the_context_beside_the_reply_is_sent_without_it(
    fake_openai, settings, studio_sources, make_document
):
    from language.tokens import estimate_tokens

    settings.CHAT_CONTEXT_TOKENS = 4000  # a table's reply may take 1600 of them
    long_garbage = "Here are the figures: " + "heron " * 1500
    fake_openai.chat_replies += [long_garbage, reply(GOOD_TABLE)]

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.READY, document.error
    first, repair = fake_openai.chat_requests
    assert [message["role"] for message in repair.body["messages"]] == ["system", "user"]
    told = repair.body["messages"][1]["content"]
    assert told.startswith(first.body["messages"][1]["content"]) and "not JSON" in told
    for request in (first, repair):
        texts = [message["content"] for message in request.body["messages"]]
        assert estimate_tokens(*texts) + request.body["max_tokens"] <= 4000


def test_json_of_the_wrong_shape_is_repaired_with_what_is_wrong(
    fake_openai, studio_sources, make_document
):
    wrong = {
        "title": "T",
        "columns": ["What", "Value"],
        "rows": [{"cells": ["A grey heron stands 95 cm tall"], "source": "[1]"}],
    }
    fake_openai.chat_replies += [reply(wrong), reply(GOOD_TABLE)]

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert (
        "row 1 has 1 cells for 2 columns"
        in fake_openai.chat_requests[1].body["messages"][-1]["content"]
    )


def test_invalid_output_twice_fails_the_document_with_a_message_and_is_billed(
    fake_openai, notebook, studio_sources, make_document
):
    fake_openai.chat_replies += ['{"title": "no questions"}', "still not a quiz"]

    document = make_document("quiz")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "did not return a valid quiz twice" in document.error
    assert "'questions' is a required property" in document.error
    assert Usage.objects.filter(kind="chat", notebook=notebook).count() == 2
    assert document.source is None  # nothing indexed


def test_a_slow_model_fails_the_document_with_a_timeout_message(
    fake_openai, settings, studio_sources, make_document
):
    settings.CHAT_TIMEOUT_SECONDS = 0.5
    settings.OPENAI_MAX_RETRIES = 0
    fake_openai.slow_seconds = 2.0
    fake_openai.fail_next("slow", endpoint="chat/completions")

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "did not answer in time" in document.error


def test_without_response_format_the_reply_is_still_parsed_from_a_code_fence(
    fake_openai, settings, studio_sources, make_document
):
    settings.GENERATION_RESPONSE_FORMAT = "none"
    fake_openai.chat_replies.append("```json\n" + reply(GOOD_TABLE) + "\n```")

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert "response_format" not in fake_openai.chat_requests[0].body


def test_parse_names_where_the_json_is_wrong():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    with pytest.raises(InvalidOutput, match="at n: 'x' is not of type 'integer'"):
        parse('{"n": "x"}', schema)
