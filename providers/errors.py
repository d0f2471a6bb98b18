class ProviderError(Exception):
    """A model call failed; the message says which role and what to check."""

    @property
    def transient(self) -> bool:
        """Whether the same call may succeed later: the server was unreachable, too slow,
        rate-limiting or failing (5xx), after the quick re-sends (openai_client.py). Jobs retry
        such errors with backoff (ops/jobs.py); a refused key or a bad answer is final."""
        return _is_transient(self.__cause__)


def _is_transient(cause: BaseException | None) -> bool:
    import openai

    if isinstance(cause, openai.APIConnectionError | openai.RateLimitError):
        return True  # APITimeoutError is an APIConnectionError
    return isinstance(cause, openai.APIStatusError) and (
        cause.status_code >= 500 or cause.status_code in {408, 409}
    )
