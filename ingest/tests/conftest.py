"""Fixtures for the ingest tests that fetch web pages."""

import pytest

from ingest.tests import web_site


@pytest.fixture
def web():
    """The test web site on 127.0.0.1; a forbidden target unless `loopback_allowed`."""
    with web_site.running() as server:
        yield server


@pytest.fixture
def loopback_allowed(settings):
    settings.URL_ALLOW_LOOPBACK = True
