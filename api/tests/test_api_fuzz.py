"""The API fuzzed from its own OpenAPI document by schemathesis: every operation, with
generated valid and invalid input, as a token holder who owns a notebook with sources.
No 5xx, every response as the document says, and every refusal JSON with a code (a field
for bad input). Bounded in examples so that it stays within a minute or two."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from api.tokens import create_token
from notebooks.tests.factories import make_cited_answer, make_source


def _schema():
    import json

    from api.v1.api import api
    from config.wsgi import application

    document = json.loads(json.dumps(api.get_openapi_schema(), default=str))
    loaded = schemathesis.openapi.from_dict(document)
    loaded.app = application
    return loaded


schema = _schema()


@pytest.fixture(autouse=True)
def keep_the_tests_connection():
    """As Django's test client does: the handler would close the test's connection, and its
    transaction with it."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def holder(owner, notebook, library):
    """A write token of the owner of a notebook with ready sources and a cited answer."""
    make_cited_answer(notebook=notebook, source=make_source(owner=owner, notebook=notebook))
    return create_token(user=owner, name="fuzz", scope="write").secret


@schemathesis.check
def refusals_are_json_with_a_code(ctx, response, case):
    if 400 <= response.status_code < 500:
        body = response.json()
        assert isinstance(body, dict) and body.get("code"), f"a refusal without a code: {body}"
        if response.status_code == 422:
            assert body.get("field"), f"bad input that names no field: {body}"
    return None


# Input whose worth the schema cannot say: a readable file, a public web address, ids that
# are this notebook's sources. Refused with a 4xx naming the field, never accepted blindly.
SEMANTIC = {
    "POST /api/v1/notebooks/{notebook_id}/sources",
    "POST /api/v1/notebooks/{notebook_id}/sources/url",
    "PUT /api/v1/notebooks/{notebook_id}/sources/chosen",
    # The custom goal needs its instructions: a rule between two fields.
    "PUT /api/v1/notebooks/{notebook_id}/chat-style",
}


@schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_the_api_holds_to_its_document(case, db, holder, notebook):
    # Half the cases in the holder's own notebook, where the input reaches the services;
    # the other half in notebooks that are not theirs (or do not exist): 404.
    parameters = case.path_parameters or {}
    if isinstance(parameters.get("notebook_id"), int) and parameters["notebook_id"] % 2 == 0:
        parameters["notebook_id"] = notebook.pk
    case.call_and_validate(
        headers={"Authorization": f"Bearer {holder}"},
        additional_checks=[refusals_are_json_with_a_code],
        excluded_checks=[positive_data_acceptance] if case.operation.label in SEMANTIC else [],
    )
