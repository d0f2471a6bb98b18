from __future__ import annotations

from django.urls import path

from generation import views

# Included under notebooks/<int:notebook_id>/studio/ (config/urls.py).
app_name = "studio"
urlpatterns = [
    path("", views.panel, name="panel"),
    path("new/", views.create, name="create"),
    path("<int:document_id>/", views.document, name="document"),
    path("<int:document_id>/retry/", views.retry, name="retry"),
    path("<int:document_id>/delete/", views.delete, name="delete"),
    path("<int:document_id>/table.csv", views.table_csv, name="csv"),
    path("<int:document_id>/drawing.svg", views.drawing_svg, name="svg"),
    path("<int:document_id>/overview.mp3", views.audio, name="audio"),
    path("<int:document_id>/slides.pptx", views.deck_file, {"suffix": "pptx"}, name="pptx"),
    path("<int:document_id>/slides.pdf", views.deck_file, {"suffix": "pdf"}, name="pdf"),
    path("<int:document_id>/overview.mp4", views.video, name="video"),
    path("<int:document_id>/slides/<int:number>/revise/", views.revise, name="revise"),
    path("<int:document_id>/revisions/<int:revision_id>/", views.revision, name="revision"),
    path("<int:document_id>/quiz/<int:number>/", views.quiz_answer, name="quiz_answer"),
    path("<int:document_id>/citations/<int:citation_id>/", views.citation, name="citation"),
]
