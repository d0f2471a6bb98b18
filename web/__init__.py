"""What the pages of several apps share: the typed request, the notebook access helper and
the passage view behind an [n]. The top layer (docs/architecture.md): only views import it."""
