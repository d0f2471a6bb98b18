import pytest
from django.core.exceptions import ImproperlyConfigured

from limits.rates import Rate, parse_rate


@pytest.mark.parametrize(
    ("value", "rate"),
    [
        ("30/minute", Rate(30, 60)),
        ("100/hour", Rate(100, 3600)),
        ("5/15minutes", Rate(5, 900)),
        ("5 / 15 min", Rate(5, 900)),
        ("20/60", Rate(20, 60)),
        ("1000/day", Rate(1000, 86400)),
        ("off", Rate(0, 1)),
        ("0", Rate(0, 1)),
    ],
)
def test_a_rate_reads_as_written(value, rate):
    assert parse_rate("RATE_LIMIT_ASK", value) == rate


@pytest.mark.parametrize("value", ["30", "30/fortnight", "many/minute", "30/0", "/minute"])
def test_a_wrong_rate_names_the_setting(value):
    with pytest.raises(ImproperlyConfigured, match="RATE_LIMIT_ASK must be a rate|0 seconds"):
        parse_rate("RATE_LIMIT_ASK", value)
