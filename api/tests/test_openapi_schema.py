"""The OpenAPI document: 3.1, valid by an independent validator, and its docs page served
from Loupe's own static files."""

from __future__ import annotations

import json

from openapi_spec_validator import validate


def test_the_document_is_valid_openapi_3_1(client):
    response = client.get("/api/v1/openapi.json")

    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.1")
    validate(document)
    paths = document["paths"]
    assert "/api/v1/notebooks/{notebook_id}/ask/stream" in paths
    assert (
        "BearerAuth" in str(document["components"]["securitySchemes"])
        or document["components"]["securitySchemes"]
    )


def test_no_object_of_the_document_repeats_a_key(client):
    """Python's json reads a repeated key silently (the last wins); Swagger UI's YAML parser
    refuses the whole document."""

    def unique(pairs):
        keys = [key for key, _ in pairs]
        assert len(keys) == len(set(keys)), keys
        return dict(pairs)

    json.loads(client.get("/api/v1/openapi.json").content, object_pairs_hook=unique)


def test_every_operation_documents_its_json_errors(client):
    document = client.get("/api/v1/openapi.json").json()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert "401" in responses and "404" in responses, f"{method} {path}"
            assert responses["404"]["content"]["application/json"], f"{method} {path}"


def test_the_docs_page_loads_its_scripts_from_our_static_files(client, owner):
    client.force_login(owner)
    page = client.get("/api/v1/docs")

    assert page.status_code == 200
    assert "/static/ninja/swagger-ui-bundle.js" in page.text
    assert "cdn" not in page.text.lower() and "https://" not in page.text
