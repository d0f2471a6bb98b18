import json

import pytest
from django.core.exceptions import ImproperlyConfigured

from billing.checks import model_prices
from billing.prices import read_prices


@pytest.fixture
def remote_models(settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.CHAT_MODEL = "gpt-test"
    settings.EMBEDDING_MODEL = "embed-test"
    settings.VISION_MODEL = ""
    settings.MODEL_PRICES = read_prices(
        json.dumps(
            {
                "gpt-test": {"input_per_million": 0.15, "output_per_million": 0.6},
                "embed-test": {"input_per_million": 0.02},
            }
        ),
        "",
    )
    return settings


def test_priced_models_pass_the_check(remote_models):
    assert model_prices(None) == []


def test_an_unpriced_configured_model_fails_the_check_naming_it_and_the_setting(
    remote_models,
):
    remote_models.VISION_MODEL = "vision-test"

    errors = model_prices(None)

    assert [error.id for error in errors] == ["billing.E001"]
    assert "vision-test" in errors[0].msg
    assert "VISION_MODEL" in errors[0].msg
    assert "MODEL_PRICES" in str(errors[0].hint)


def test_speech_models_are_checked_too(remote_models):
    remote_models.STT_MODEL = "whisper-test"

    errors = model_prices(None)

    assert len(errors) == 1
    assert "whisper-test" in errors[0].msg


def test_local_models_need_no_configured_price(settings):
    settings.OPENAI_BASE_URL = ""
    settings.MODEL_PRICES = read_prices("", "")

    assert model_prices(None) == []


def test_prices_file_and_environment_merge_and_the_environment_wins(tmp_path):
    prices_file = tmp_path / "prices.json"
    prices_file.write_text(
        json.dumps({"a": {"input_per_million": 1}, "b": {"per_second": "0.0001"}})
    )

    prices = read_prices(json.dumps({"a": {"input_per_million": 3}}), str(prices_file))

    assert prices["a"] == {"input_per_million": 3}
    assert prices["b"] == {"per_second": "0.0001"}
    assert prices["local/multilingual-e5-small"] == {}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("not json", "not valid JSON"),
        ('["a"]', "must be a JSON object"),
        ('{"a": {"per_token": 1}}', "unknown keys per_token"),
        ('{"a": {"input_per_million": -1}}', "use a number >= 0"),
        ('{"a": {"input_per_million": "cheap"}}', "use a number >= 0"),
    ],
)
def test_a_price_that_cannot_be_used_stops_the_settings(raw, expected):
    with pytest.raises(ImproperlyConfigured, match=expected):
        read_prices(raw, "")


def test_a_missing_prices_file_stops_the_settings(tmp_path):
    with pytest.raises(ImproperlyConfigured, match="MODEL_PRICES_FILE"):
        read_prices("", str(tmp_path / "missing.json"))
