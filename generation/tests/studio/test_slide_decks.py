"""A slide deck: the model's constrained JSON becomes slides whose bullets cite passages,
exported as a PPTX (read back with python-pptx) and a PDF (read back with pypdf), the
passages a slide cites as its footnotes; a bad deck is repaired once, then its bad bullets
are left out and counted; one slide is revised without remaking the others."""

import copy
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse
from pptx import Presentation
from pypdf import PdfReader

from generation.documents.models import GeneratedDocument, SlideRevision
from generation.documents.services import request_slide_revision, revise_slide
from generation.tests.studio.conftest import DECK, deck_slide, reply
from texts.errors import UserFacingError


def stored(field) -> bytes:
    with field.open("rb") as opened:
        return opened.read()


def pptx_texts(data: bytes) -> list[list[str]]:
    """Each slide's texts, shape by shape, as PowerPoint would show them."""
    deck = Presentation(io.BytesIO(data))
    return [
        [shape.text_frame.text for shape in slide.shapes if shape.has_text_frame]
        for slide in deck.slides
    ]


def test_a_deck_is_written_cited_and_exported_as_pptx_and_pdf(
    client, fake_openai, owner, notebook, studio_sources, make_document
):
    fake_openai.chat_replies.append(reply(DECK))

    document = make_document("slides")

    assert document.status == GeneratedDocument.Status.READY, document.error
    [request] = fake_openai.chat_requests
    schema = request.body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["slides"]["minItems"] == 6
    assert schema["properties"]["slides"]["maxItems"] == 15
    assert schema["properties"]["slides"]["items"]["properties"]["bullets"]["minItems"] == 3
    assert len(document.data["slides"]) == 6
    assert document.unsupported_dropped == 0
    citations = {cited.n: cited for cited in document.citations.all()}
    assert {cited.source.title for cited in citations.values()} == {"herons", "trains"}

    deck = Presentation(io.BytesIO(stored(document.pptx)))
    assert len(deck.slides) == 7  # the title, then each slide
    assert deck.slide_width / deck.slide_height == pytest.approx(16 / 9, rel=0.01)
    texts = pptx_texts(stored(document.pptx))
    assert texts[0] == ["Herons and night trains"]
    heading, body, footnotes = texts[1]
    assert heading == "Grey herons"
    assert (
        body.splitlines()[1] == "The population in Britain grew by 25 % between 1990 and 2020 [1]."
    )
    assert footnotes == "[1] herons\n[2] herons"
    assert "Couchettes are cheaper" in texts[6][1]
    assert texts[6][2].startswith("[") and "trains" in texts[6][2]
    notes = list(deck.slides)[1].notes_slide.notes_text_frame.text
    assert notes == "Grey herons are large birds of rivers and coasts."

    pdf = PdfReader(io.BytesIO(stored(document.pdf)))
    assert len(pdf.pages) == 7
    assert pdf.pages[0].mediabox.width / pdf.pages[0].mediabox.height == pytest.approx(16 / 9)
    page = " ".join(pdf.pages[6].extract_text().split())
    assert "Comfort" in page and "Couchettes are cheaper" in page and "trains" in page

    client.force_login(owner)
    shown = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).content.decode()
    assert shown.count("data-slide ") == 6
    assert 'id="slide-6"' in shown and "Speaker notes" in shown
    assert reverse("studio:citation", args=[notebook.pk, document.pk, citations[1].pk]) in shown
    response = client.get(reverse("studio:pptx", args=[notebook.pk, document.pk]))
    assert response["Content-Type"].endswith("presentationml.presentation")
    assert b"".join(response.streaming_content) == stored(document.pptx)
    response = client.get(reverse("studio:pdf", args=[notebook.pk, document.pk]))
    assert b"".join(response.streaming_content)[:5] == b"%PDF-"


def test_an_outsider_gets_neither_the_exports_nor_the_revision(
    client, fake_openai, owner, outsider, notebook, studio_sources, make_document
):
    fake_openai.chat_replies.append(reply(DECK))
    document = make_document("slides")
    client.force_login(outsider)

    for name in ("studio:pptx", "studio:pdf"):
        assert client.get(reverse(name, args=[notebook.pk, document.pk])).status_code == 404
    url = reverse("studio:revise", args=[notebook.pk, document.pk, 1])
    assert client.post(url, {"instruction": "shorter"}).status_code == 404
    assert len(fake_openai.chat_requests) == 1


def test_a_deck_of_too_few_slides_is_repaired_once(fake_openai, studio_sources, make_document):
    short = {**DECK, "slides": DECK["slides"][:4]}
    fake_openai.chat_replies += [reply(short), reply(DECK)]

    document = make_document("slides")

    assert document.status == GeneratedDocument.Status.READY, document.error
    first, second = fake_openai.chat_requests
    repair = second.body["messages"][-1]["content"]
    assert "is too short" in repair and "slides" in repair


def test_a_deck_malformed_twice_fails_saying_what_was_wrong(
    fake_openai, studio_sources, make_document
):
    too_many = {**DECK, "slides": DECK["slides"] * 3}  # 18 slides
    fake_openai.chat_replies += ["Here are your slides!", reply(too_many)]

    document = make_document("slides")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "did not return a valid slide deck twice" in document.error
    assert "not JSON" in document.error and "is too long" in document.error
    assert not document.pptx and not document.pdf


def test_empty_bullets_and_markers_naming_no_passage_are_left_out_and_counted(
    client, fake_openai, owner, notebook, studio_sources, make_document
):
    deck = copy.deepcopy(DECK)
    deck["slides"][0]["bullets"] += [" [2]", "The moon landing was in 1969 [99]."]
    deck["slides"][1]["bullets"][0] = "Herons breed in colonies called heronries [77]."
    deck["slides"][5] = deck_slide(
        "Outer space", "Mars has two moons [1].", "Jupiter is a gas giant.", "Saturn has rings [4]."
    )
    fake_openai.chat_replies.append(reply(deck))

    document = make_document("slides")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert len(fake_openai.chat_requests) == 1
    slides = document.data["slides"]
    # The empty bullet, the moon landing and the whole last slide (three bullets) are out.
    assert document.unsupported_dropped == 5
    assert [slide["heading"] for slide in slides][-1] == "Passengers"
    assert len(slides) == 5 and len(slides[0]["bullets"]) == 3
    # The marker naming no passage was replaced by the passage that states it.
    placed = slides[1]["bullets"][0]
    assert placed.startswith("Herons breed in colonies called heronries [")
    n = int(placed.rsplit("[", 1)[1].rstrip("]."))
    assert document.citations.get(n=n).attributed
    assert len(Presentation(io.BytesIO(stored(document.pptx))).slides) == 6
    client.force_login(owner)
    shown = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).content.decode()
    assert "Loupe left out 5 claims" in shown


def test_one_slide_is_revised_and_the_others_stay_as_they_were(
    client, fake_openai, owner, notebook, studio_sources, make_document
):
    fake_openai.chat_replies.append(reply(DECK))
    document = make_document("slides")
    before = copy.deepcopy(document.data["slides"])
    numbers = [cited.n for cited in document.citations.all()]
    revised = deck_slide(
        "Comfort, briefly",
        "Sleeper cabins include breakfast [4].",
        "Couchettes are cheaper [4].",
        "Couchettes have four or six berths [4].",
    )
    # The deck's own numbering: [4] is the fourth passage the deck cites.
    fake_openai.chat_replies.append(reply(revised))
    client.force_login(owner)

    url = reverse("studio:revise", args=[notebook.pk, document.pk, 6])
    response = client.post(url, {"instruction": "shorter"})

    assert response.status_code == 302 and response["Location"].endswith("#slide-6")
    revision = SlideRevision.objects.get(document=document)
    revise_slide(revision_id=revision.pk)  # as the worker does
    revision.refresh_from_db()
    assert revision.status == SlideRevision.Status.READY, revision.error
    request = fake_openai.chat_requests[-1]
    assert request.body["response_format"]["json_schema"]["name"] == "slide"
    prompt = request.body["messages"][1]["content"]
    assert "Revise it: shorter" in prompt and '"heading": "Comfort"' in prompt
    assert "[4] (trains" in prompt
    document.refresh_from_db()
    assert document.data["slides"][:5] == before[:5]
    assert document.data["slides"][5]["heading"] == "Comfort, briefly"
    assert [cited.n for cited in document.citations.all()] == numbers
    assert pptx_texts(stored(document.pptx))[6][0] == "Comfort, briefly"
    assert "Comfort, briefly" in " ".join(
        PdfReader(io.BytesIO(stored(document.pdf))).pages[6].extract_text().split()
    )
    assert document.source.chunks.filter(text__contains="Comfort, briefly").exists()


def test_a_revision_no_passage_supports_leaves_the_slide_as_it_was(
    fake_openai, owner, studio_sources, make_document
):
    fake_openai.chat_replies.append(reply(DECK))
    document = make_document("slides")
    before = copy.deepcopy(document.data)
    invented = deck_slide("Space", "Mars has two moons [1].", "Venus is hot.", "Pluto is small.")
    fake_openai.chat_replies += [reply(invented), reply(invented)]

    revision = request_slide_revision(
        document=document, number=2, instruction="about space", user=owner
    )
    revision = revise_slide(revision_id=revision.pk)

    assert revision.status == SlideRevision.Status.FAILED
    assert "did not return a valid slide twice" in revision.error
    document.refresh_from_db()
    assert document.data == before
    with pytest.raises(UserFacingError, match="no slide 9"):
        request_slide_revision(document=document, number=9, instruction="shorter", user=owner)
    with pytest.raises(UserFacingError, match="Say how to revise"):
        request_slide_revision(document=document, number=1, instruction="  ", user=owner)


@pytest.mark.django_db(transaction=True)
def test_generate_slides_json_names_the_pptx_and_the_pdf(
    fake_openai, capsys, owner, notebook, studio_sources
):
    fake_openai.chat_replies.append(reply(DECK))

    call_command(
        "generate", "--user", "owner", "--notebook", "Research", "--kind", "slides", "--json"
    )

    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "ready", result["error"]
    assert result["pptx"].endswith(".pptx") and result["pdf"].endswith(".pdf")
    with open(result["pptx"], "rb") as pptx:
        assert len(Presentation(pptx).slides) == 7
    with open(result["pdf"], "rb") as pdf:
        assert len(PdfReader(pdf).pages) == 7


def test_without_a_chat_model_the_deck_is_made_from_the_sources_sections(
    client, fake_openai, settings, owner, notebook, studio_sources, make_document
):
    settings.CHAT_MODEL = ""

    document = make_document("slides")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.mode == GeneratedDocument.Mode.EXTRACTIVE
    assert not fake_openai.chat_requests
    headings = [slide["heading"] for slide in document.data["slides"]]
    assert "Breeding" in headings and "Comfort" in headings
    assert all("[" in bullet for slide in document.data["slides"] for bullet in slide["bullets"])
    assert len(Presentation(io.BytesIO(stored(document.pptx))).slides) == len(headings) + 1
    client.force_login(owner)
    shown = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).content.decode()
    assert "Revise this slide" not in shown  # no model to revise it
