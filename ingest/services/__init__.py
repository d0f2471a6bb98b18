"""Adding sources and turning them into chunks with vectors.

adding.py       an upload into its owner's library, the same bytes stored once
web_pages.py    a web page by its address, fetched by the worker through the URL guard
reprocessing.py a source read again (a failed one retried)
pipeline.py     the worker's part: read, chunk, summarise, then embed (embedding.py),
                saying how far it got (progress.py)
"""

from __future__ import annotations

from ingest.services.adding import AddedSource, UploadRejected, add_markdown_source, add_source
from ingest.services.embedding import forget_batch_sizes
from ingest.services.pipeline import process_source
from ingest.services.reprocessing import SourceBusy, reprocess_source
from ingest.services.web_pages import AlreadyInLibrary, add_url, normalise_url

__all__ = [
    "AddedSource",
    "AlreadyInLibrary",
    "SourceBusy",
    "UploadRejected",
    "add_markdown_source",
    "add_source",
    "add_url",
    "forget_batch_sizes",
    "normalise_url",
    "process_source",
    "reprocess_source",
]
