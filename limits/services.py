"""Counting actions against rates (limits/rates.py), in PostgreSQL."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.db import connection

from limits.models import RateCounter
from limits.rates import Rate


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    count: int  # this window's count, including this attempt when it was counted
    retry_after: int  # seconds until the window ends


def hit(key: str, rate: Rate, *, now: float | None = None) -> Verdict:
    """Count one attempt of `key` and say whether it is within `rate`.

    A fixed window: simple and one statement, at the price of allowing up to twice the rate
    across a window boundary. Refused attempts count too, so hammering does not help.
    """
    if not rate.enabled:
        return Verdict(allowed=True, count=0, retry_after=0)
    now = time.time() if now is None else now
    window = int(now // rate.seconds)
    table = RateCounter._meta.db_table
    with connection.cursor() as cursor:
        # One statement (one round trip, one commit) before every billed action: the count,
        # and the key's older windows dropped (they are done with; the table stays small).
        cursor.execute(
            f"""
            WITH dropped AS (DELETE FROM {table} WHERE key = %(key)s AND "window" < %(window)s)
            INSERT INTO {table} (key, "window", count) VALUES (%(key)s, %(window)s, 1)
            ON CONFLICT (key, "window") DO UPDATE SET count = {table}.count + 1
            RETURNING count
            """,
            {"key": key, "window": window},
        )
        (count,) = cursor.fetchone()
    retry_after = int((window + 1) * rate.seconds - now) + 1
    return Verdict(allowed=count <= rate.requests, count=count, retry_after=retry_after)


def peek(key: str, rate: Rate, *, now: float | None = None) -> Verdict:
    """Whether one more attempt of `key` would be within `rate`, without counting one."""
    if not rate.enabled:
        return Verdict(allowed=True, count=0, retry_after=0)
    now = time.time() if now is None else now
    window = int(now // rate.seconds)
    row = RateCounter.objects.filter(key=key, window=window).values_list("count", flat=True)
    count = row.first() or 0
    retry_after = int((window + 1) * rate.seconds - now) + 1
    return Verdict(allowed=count < rate.requests, count=count, retry_after=retry_after)
