from django.urls import reverse

from notebooks.tests.factories import make_source


def test_the_notebook_page_shows_each_source_summary_and_how_it_was_made(client, owner, notebook):
    written = make_source(owner=owner, notebook=notebook, title="Otters")
    written.summary, written.summary_mode = "A study of how otters sleep.", "llm"
    written.save()
    picked = make_source(owner=owner, notebook=notebook, title="Herons")
    picked.summary, picked.summary_mode = "Herons wait by the pond.", "extractive"
    picked.save()
    client.force_login(owner)

    response = client.get(reverse("notebooks:detail", args=[notebook.pk]))

    assert "<summary>Summary</summary>" in response.text
    assert "A study of how otters sleep." in response.text
    assert "Summary (extractive: sentences from the document)" in response.text
    assert "Herons wait by the pond." in response.text


def test_a_missing_summary_says_why(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    source.summary_error = "No summary: the chat model answered HTTP 500."
    source.save()
    client.force_login(owner)

    response = client.get(reverse("notebooks:detail", args=[notebook.pk]))

    assert "No summary: the chat model answered HTTP 500." in response.text
    assert "<summary>Summary" not in response.text
