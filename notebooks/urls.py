from __future__ import annotations

from django.urls import path

from notebooks import views

app_name = "notebooks"
urlpatterns = [
    path("", views.notebook_list, name="list"),
    path("new/", views.create, name="create"),
    path("<int:notebook_id>/", views.detail, name="detail"),
    path("<int:notebook_id>/sources/", views.sources, name="sources"),
    path("<int:notebook_id>/upload/", views.upload, name="upload"),
    path(
        "<int:notebook_id>/sources/<int:source_id>/reprocess/",
        views.reprocess,
        name="reprocess",
    ),
    path(
        "<int:notebook_id>/sources/<int:source_id>/remove/",
        views.remove_source,
        name="remove_source",
    ),
    path("<int:notebook_id>/add-url/", views.add_web_page, name="add_url"),
    path("<int:notebook_id>/ask/", views.ask, name="ask"),
    path("<int:notebook_id>/ask/stream/", views.ask_stream, name="ask_stream"),
    path("<int:notebook_id>/messages/<int:message_id>/", views.message, name="message"),
    path(
        "<int:notebook_id>/conversations/new/",
        views.detail,
        {"new": True},
        name="new_conversation",
    ),
    path(
        "<int:notebook_id>/conversations/<int:conversation_id>/",
        views.detail,
        name="conversation",
    ),
    path(
        "<int:notebook_id>/conversations/<int:conversation_id>/rename/",
        views.rename_conversation,
        name="rename_conversation",
    ),
    path(
        "<int:notebook_id>/conversations/<int:conversation_id>/delete/",
        views.delete_conversation,
        name="delete_conversation",
    ),
    path(
        "<int:notebook_id>/conversations/<int:conversation_id>/post/",
        views.post_conversation,
        name="post_conversation",
    ),
    path("<int:notebook_id>/citations/<int:citation_id>/", views.citation, name="citation"),
    path("<int:notebook_id>/sources/choose/", views.choose, name="choose_sources"),
    path("<int:notebook_id>/chat-style/", views.chat_style_view, name="chat_style"),
    path("<int:notebook_id>/notes/", views.notes, name="notes"),
    path("<int:notebook_id>/notes/new/", views.new_note, name="new_note"),
    path("<int:notebook_id>/notes/<int:note_id>/", views.note, name="note"),
    path(
        "<int:notebook_id>/notes/<int:note_id>/delete/",
        views.delete_note_view,
        name="delete_note",
    ),
    path("<int:notebook_id>/notes/<int:note_id>/post/", views.post_note, name="post_note"),
    path("<int:notebook_id>/notes/<int:note_id>/source/", views.note_source, name="note_source"),
    path(
        "<int:notebook_id>/messages/<int:message_id>/save-note/",
        views.save_to_note,
        name="save_to_note",
    ),
    path(
        "<int:notebook_id>/note-citations/<int:note_citation_id>/",
        views.note_citation,
        name="note_citation",
    ),
    path(
        "<int:notebook_id>/sources/<int:source_id>/pages/<int:page>.png",
        views.page_image,
        name="page_image",
    ),
]
