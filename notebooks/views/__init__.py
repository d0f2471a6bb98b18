"""The notebook pages, one module per feature; notebooks/urls.py names every view.

- `pages`: the notebook list, a new notebook, the notebook page, its chat style.
- `sources`: the sources column (upload, web page, read again, remove, tick).
- `chat`: asking, at once or streamed, and one stored message.
- `conversations`: finding, renaming, deleting and posting a conversation.
- `citations`: the passage behind an [n] and the page picture it highlights.
- `notes`: the notes panel.
"""
