from __future__ import annotations

from django.urls import path

from notebooks.views import chat, citations, conversations, notes, pages, sources

app_name = "notebooks"
urlpatterns = [
    path("", pages.notebook_list, name="list"),
    path("new/", pages.create, name="create"),
    path("<int:notebook_id>/", pages.detail, name="detail"),
    path("<int:notebook_id>/sources/", sources.sources, name="sources"),
    path("<int:notebook_id>/upload/", sources.upload, name="upload"),
    path(
        "<int:notebook_id>/sources/<int:source_id>/reprocess/",
        sources.reprocess,
        name="reprocess",
    ),
    path(
        "<int:notebook_id>/sources/<int:source_id>/remove/",
        sources.remove_source,
        name="remove_source",
    ),
    path("<int:notebook_id>/add-url/", sources.add_web_page, name="add_url"),
    path("<int:notebook_id>/ask/", chat.ask, name="ask"),
    path("<int:notebook_id>/ask/stream/", chat.ask_stream, name="ask_stream"),
    path("<int:notebook_id>/messages/<int:message_id>/", chat.message, name="message"),
    path(
        "<int:notebook_id>/conversations/new/",
        pages.detail,
        {"new": True},
        name="new_conversation",
    ),
    path(
        "<int:notebook_id>/conversations/<int:conversation_id>/",
        pages.detail,
        name="conversation",
    ),
    path(
        "<int:notebook_id>/conversations/<int:conversation_id>/rename/",
        conversations.rename_conversation,
        name="rename_conversation",
    ),
    path(
        "<int:notebook_id>/conversations/<int:conversation_id>/delete/",
        conversations.delete_conversation,
        name="delete_conversation",
    ),
    path(
        "<int:notebook_id>/conversations/<int:conversation_id>/post/",
        conversations.post_conversation,
        name="post_conversation",
    ),
    path("<int:notebook_id>/citations/<int:citation_id>/", citations.citation, name="citation"),
    path("<int:notebook_id>/sources/choose/", sources.choose, name="choose_sources"),
    path("<int:notebook_id>/chat-style/", pages.chat_style_view, name="chat_style"),
    path("<int:notebook_id>/notes/", notes.notes, name="notes"),
    path("<int:notebook_id>/notes/new/", notes.new_note, name="new_note"),
    path("<int:notebook_id>/notes/<int:note_id>/", notes.note, name="note"),
    path(
        "<int:notebook_id>/notes/<int:note_id>/delete/",
        notes.delete_note_view,
        name="delete_note",
    ),
    path("<int:notebook_id>/notes/<int:note_id>/post/", notes.post_note, name="post_note"),
    path("<int:notebook_id>/notes/<int:note_id>/source/", notes.note_source, name="note_source"),
    path(
        "<int:notebook_id>/messages/<int:message_id>/save-note/",
        notes.save_to_note,
        name="save_to_note",
    ),
    path(
        "<int:notebook_id>/note-citations/<int:note_citation_id>/",
        citations.note_citation,
        name="note_citation",
    ),
    path(
        "<int:notebook_id>/sources/<int:source_id>/pages/<int:page>.png",
        citations.page_image,
        name="page_image",
    ),
]
