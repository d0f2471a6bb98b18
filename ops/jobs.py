"""How Loupe's jobs are retried.

A model server that is down, overloaded or rate-limiting (after the openai client's own
quick retries) is worth trying again minutes later, and so is a database that went away
(ops/database.py); anything else (a bad file, a refused key, no credit) would fail the same
way again, so it fails the job at once.
"""

from __future__ import annotations

from django.conf import settings
from procrastinate import BaseRetryStrategy, RetryDecision
from procrastinate.jobs import Job

from ops.database import is_lost_database
from providers.errors import ProviderError

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
