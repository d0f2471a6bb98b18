class ProviderError(Exception):
    """A model call failed; the message says which role and what to check."""
