"""How Loupe's jobs are retried.

A model server that is down, overloaded or rate-limiting (after the quick re-sends of
providers/openai_client.py) is worth trying again minutes later, and so is a database that went away
(ops/database.py); anything else (a bad file, a refused key, no credit) would fail the same
way again, so it fails the job at once. `run_background_work` is the same rule for the row
the job works on (library/background_work.py): queued again, or failed with the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from django.conf import settings
from procrastinate import BaseRetryStrategy, RetryDecision
from procrastinate.jobs import Job

from ops.database import is_lost_database
from providers.errors import ProviderError
from texts import Text, message_of
from texts.errors import without_server_paths

if TYPE_CHECKING:
    from library.background_work import BackgroundWork

logger = logging.getLogger(__name__)

# Waits never grow beyond an hour, however many attempts are allowed.
MAX_WAIT_SECONDS = 3600


class TransientErrorRetry(BaseRetryStrategy):
    """Retry a job that failed on a transient provider error, with exponential backoff.

    Attempt n (0 for the first run) that fails transiently runs again after
    JOB_RETRY_BASE_SECONDS × 2ⁿ seconds, until JOB_RETRY_ATTEMPTS runs in all.
    """

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        if not self.retries_left(job) or not is_transient(exception):
            return None
        return RetryDecision(retry_in={"seconds": self.wait_seconds(job.attempts)})

    @staticmethod
    def retries_left(job: Job) -> bool:
        """Whether a transient failure of this run would be retried (else it is final)."""
        return job.attempts + 1 < settings.JOB_RETRY_ATTEMPTS

    @staticmethod
    def wait_seconds(attempts: int) -> int:
        return min(settings.JOB_RETRY_BASE_SECONDS * 2**attempts, MAX_WAIT_SECONDS)


def is_transient(exception: BaseException) -> bool:
    if isinstance(exception, ProviderError):
        return exception.transient
    return is_lost_database(exception)


TRANSIENT_RETRY = TransientErrorRetry()


def run_background_work(
    work: BackgroundWork,
    run: Callable[[], object],
    *,
    raise_transient: bool,
    failures: tuple[type[Exception], ...],
    unexpected: Callable[[str], Text],
    fail: Callable[[Text | str], None] | None = None,
) -> bool:
    """Run `run` for `work`; True when it finished, False when it failed the work.

    A ProviderError or one of `failures` (a source that cannot be read, say) fails the work
    with its message; any other exception with `unexpected(…)` around its type and text,
    logged with its traceback. With `raise_transient` (the job has attempts left), a
    transient provider error queues the work again and is raised, and a lost database is
    raised as it is, for the job to run again later. `fail` replaces `work.fail`.
    """
    give_up = fail or work.fail
    expected: tuple[type[Exception], ...] = (*failures, ProviderError)
    try:
        run()
    except expected as exc:
        if raise_transient and isinstance(exc, ProviderError) and exc.transient:
            work.queue_again(message_of(exc))
            raise
        give_up(message_of(exc))
        return False
    except Exception as exc:
        if raise_transient and is_lost_database(exc):
            raise  # the job runs again once the database is back (ops/database.py)
        logger.exception("%s %s failed", work._meta.verbose_name, work.pk)
        give_up(unexpected(without_server_paths(f"{type(exc).__name__}: {exc}")))
        return False
    return True
