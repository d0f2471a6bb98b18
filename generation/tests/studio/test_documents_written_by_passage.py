"""A document written a passage at a time (GENERATION_BY_PASSAGE, on for the local model):
one short call per passage, its claims cited to that passage by Loupe and kept only where
the passage supports them; a passage whose replies are invalid or invented is left out; the
document assembled in code in the passages' order."""

from __future__ import annotations

import re

import pytest
from django.template.loader import render_to_string

from generation.documents import pieces
from generation.documents.by_passage import asked_of, spared, spread
from generation.documents.kinds import quiz, report, slides, table
from generation.documents.models import GeneratedDocument
from generation.documents.structured import InvalidOutput
from generation.tests.studio.conftest import reply
from providers.local_model import Plan
from providers.local_model_supervisor import LocalModelServer

PASSAGE_RE = re.compile(r"^From (?P<where>[^\n]*):\n\n(?P<text>.*)$", re.DOTALL)


@pytest.fixture(autouse=True)
def by_passage(settings):
    settings.GENERATION_BY_PASSAGE = True


def passage_of(body: dict) -> str:
    """The passage a request asks about (its text alone)."""
    found = PASSAGE_RE.match(body["messages"][1]["content"])
    assert found, body["messages"][1]["content"]
    return found.group("text")


def first_sentence(text: str) -> str:
    """The passage's first whole sentence, without its heading lines."""
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return re.split(r"(?<=[.!?])\s", " ".join(lines))[0]


def heading_of(text: str) -> str:
    headings = [line.lstrip("# ") for line in text.splitlines() if line.startswith("#")]
    return headings[0] if headings else "More"


def test_a_quiz_asks_one_question_of_each_passage_and_places_the_right_answer_itself(
    fake_openai, studio_sources, make_document
):
    asked: list[str] = []

    def question(body: dict) -> str:
        text = passage_of(body)
        asked.append(text)
        sentence = first_sentence(text)
        return reply(
            {
                "fact": sentence,
                "question": f"What does the document say about {sentence.split()[1]}?",
                "key_term": " ".join(sentence.split()[:5]),
                "wrong_answers": ["Nothing at all", "nothing at all", "It is not mentioned"],
            }
        )

    fake_openai.chat_reply_for = question

    document = make_document("quiz")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.mode == GeneratedDocument.Mode.LLM
    assert document.title == "Quiz: Research"
    requests = fake_openai.chat_requests
    assert len(requests) == len(asked) >= 4  # one call per passage, each valid at once
    for request in requests:
        material = request.body["messages"][1]["content"]
        assert not re.search(r"\[\d+\]", material)  # the model is shown no numbers to cite
        assert request.body["response_format"]["json_schema"]["name"] == "quiz part"
        assert "Write no [n] markers" in request.body["messages"][0]["content"]
    questions = document.data["questions"]
    assert len(questions) == len(asked)
    places = {question["answer_index"] for question in questions}
    assert len(places) > 1  # the right answer is not always first
    for item in questions:
        assert item["type"] == "multiple_choice"
        # The duplicate wrong answer is kept once; the right one is where answer_index says.
        assert len(item["options"]) == 3
        assert item["options"][item["answer_index"]] not in ("Nothing at all",)
        assert re.search(r"\[\d+\]\.?$", item["explanation"])
    citations = list(document.citations.all())
    assert citations and all(cited.supported for cited in citations)
    assert not any(cited.attributed for cited in citations)  # cited by construction


def test_an_invented_card_and_a_passage_whose_replies_are_junk_are_left_out(
    fake_openai, studio_sources, make_document, caplog
):
    calls: dict[str, int] = {}

    def cards(body: dict) -> str:
        text = passage_of(body)
        calls[text] = calls.get(text, 0) + 1
        if "Vienna" in text:
            return "Sure! Here are your flashcards: front/back"  # never JSON
        sentence = first_sentence(text)
        sentence = sentence[:1].upper() + sentence[1:]  # a chunk may start mid-sentence
        invented = {"front": "Moon", "back": "The moon landing was in 1969."}
        return reply({"cards": [{"front": heading_of(text), "back": sentence}, invented]})

    fake_openai.chat_reply_for = cards

    document = make_document("flashcards")

    assert document.status == GeneratedDocument.Status.READY, document.error
    [vienna] = [text for text in calls if "Vienna" in text]
    assert calls[vienna] == 2  # asked, then repaired once, then left out
    backs = " ".join(card["back"] for card in document.data["cards"])
    assert "Vienna" not in backs
    assert "moon" not in backs.lower()
    assert document.unsupported_dropped == len(calls) - 1  # one invented card per passage
    assert len(document.data["cards"]) == len(calls) - 1
    assert "passage" in caplog.text and "left out" in caplog.text


def test_a_report_is_a_section_per_passage_in_the_documents_order(
    fake_openai, studio_sources, make_document
):
    def section(body: dict) -> str:
        text = passage_of(body)
        return reply({"heading": heading_of(text), "sentences": [first_sentence(text)]})

    fake_openai.chat_reply_for = section

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.READY, document.error
    markdown = document.data["markdown"]
    headings = re.findall(r"^## (.+)$", markdown, re.MULTILINE)
    assert len(headings) == len({heading.lower() for heading in headings})  # merged
    assert headings.index("Grey herons") < headings.index("Night trains")
    sentences = re.findall(r"[^.\n]+\[\d+\]\.", markdown)
    assert sentences
    assert all(cited.supported for cited in document.citations.all())


def test_a_passage_that_gives_nothing_is_replaced_by_the_spare_read_beside_it(
    fake_openai, studio_sources, make_document, settings
):
    settings.GENERATION_PASSAGES = 4  # six read (spared), four asked, two spares between
    calls: list[str] = []

    def section(body: dict) -> str:
        text = passage_of(body)
        calls.append(text)
        if text == calls[0]:  # the first passage asked: never JSON, so left out
            return "Sure! Here is the section you asked for."
        return reply({"heading": heading_of(text), "sentences": [first_sentence(text)]})

    fake_openai.chat_reply_for = section

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.READY, document.error
    junk = calls[0]
    assert calls.count(junk) == 2  # asked, then repaired once, then replaced
    assert len(calls) == 2 + 4  # the other three asked and the spare, each valid at once
    assert len(set(calls)) == 5  # the second spare is never asked
    markdown = document.data["markdown"]
    assert first_sentence(junk).rstrip(".") not in markdown
    cited = sorted(citation.n for citation in document.citations.all())
    assert len(cited) == 4  # four passages, the spare among them
    # The spare is the passage next to the one it replaces: the sections stay in the order
    # of the documents, the spare's where the junk passage's would have been.
    spare, next_asked = (first_sentence(calls[n]).rstrip(".") for n in (2, 3))
    assert markdown.index(spare) < markdown.index(next_asked)
    assert all(cited.supported for cited in document.citations.all())


def test_the_passages_read_for_a_document_by_passage_include_spares(settings):
    settings.GENERATION_PASSAGES = 8
    assert spared(8) == 12
    assert spared(1) == 2
    assert asked_of(12, 0) == [1, 3, 4, 6, 7, 9, 10, 12]  # a spare beside each pair
    # A kind that may ask more (a quiz, up to 20) still asks 8: the others are spares.
    assert asked_of(12, 20) == asked_of(12, 0)
    assert asked_of(12, 5) == spread(12, 5)  # a brief video's five slides
    assert asked_of(6, 0) == [1, 2, 3, 4, 5, 6]  # a short notebook: no spare


def test_a_section_that_slips_into_another_script_is_asked_again(
    fake_openai, studio_sources, make_document
):
    asked: list[str] = []

    def section(body: dict) -> str:
        text = passage_of(body)
        slipped = text not in asked
        asked.append(text)
        sentence = first_sentence(text)
        if slipped:
            sentence = sentence.rstrip(".") + " and the package管理."
        return reply({"heading": heading_of(text), "sentences": [sentence]})

    fake_openai.chat_reply_for = section

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert "管理" not in document.data["markdown"]
    repairs = [r for r in fake_openai.chat_requests if len(r.body["messages"]) > 2]
    assert repairs and "another script (管理)" in repairs[0].body["messages"][-1]["content"]


def test_a_brief_video_asks_only_as_many_passages_as_it_has_slides(
    fake_openai, studio_sources, make_document, settings
):
    settings.GENERATION_PASSAGES = 12

    def slide(body: dict) -> str:
        text = passage_of(body)
        sentence = first_sentence(text)
        return reply(
            {"heading": heading_of(text), "bullets": [sentence], "notes": f"Here: {sentence}"}
        )

    fake_openai.chat_reply_for = slide
    document_kind = "video"
    from generation.documents.services import generate_document, request_document

    document = request_document(
        user=studio_sources[0].owner,
        notebook=studio_sources[0].notebooks.first(),
        kind=document_kind,
        video_format="brief",
    )
    generate_document(document_id=document.pk)
    document.refresh_from_db()

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert len(fake_openai.chat_requests) == 5  # a brief has at most five slides
    assert len(document.data["slides"]) == 5
    assert document.video


def test_a_document_no_passage_supports_fails_saying_so(fake_openai, studio_sources, make_document):
    fake_openai.chat_reply_for = lambda body: reply(
        {"heading": "Space", "sentences": ["The moon landing was in 1969."]}
    )

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "nothing the passages support" in document.error


def test_passages_asked_are_spread_from_the_first_to_the_last():
    assert spread(5, 0) == [1, 2, 3, 4, 5]
    assert spread(5, 8) == [1, 2, 3, 4, 5]
    assert spread(16, 5) == [1, 5, 9, 12, 16]


def test_the_local_model_writes_documents_a_passage_at_a_time(tmp_path, monkeypatch):
    monkeypatch.delenv("GENERATION_BY_PASSAGE", raising=False)
    plan = Plan(tmp_path / "m.gguf", "m", "a model", 2, 4096, "")
    server = LocalModelServer(plan, data_dir=tmp_path)
    assert server.environment()["GENERATION_BY_PASSAGE"] == "1"


def test_the_page_says_which_passage_is_being_written(studio_sources, owner, notebook):
    document = GeneratedDocument.objects.create(
        notebook=notebook,
        owner=owner,
        kind="quiz",
        status=GeneratedDocument.Status.PROCESSING,
        stage=GeneratedDocument.Stage.WRITING,
        progress_done=3,
        progress_total=8,
    )
    page = render_to_string("generation/_status.html", {"document": document})
    assert "writing, passage 3 of 8" in " ".join(page.split())


def test_a_quiz_answer_cut_off_or_a_question_about_the_passage_is_asked_again(
    fake_openai, studio_sources, make_document
):
    seen: dict[str, int] = {}

    def question(body: dict) -> str:
        text = passage_of(body)
        seen[text] = seen.get(text, 0) + 1
        sentence = first_sentence(text)
        if seen[text] == 1 and len(seen) == 1:
            answer, asked = "x" * 80, "What is it?"  # stopped at its most characters
        elif seen[text] == 1 and len(seen) == 2:
            answer, asked = "herons", "What does the passage say?"
        elif seen[text] == 1 and len(seen) == 3:
            answer, asked = "night trains", "Which trains run at night?"
        else:
            answer, asked = " ".join(sentence.split()[:3]), "What is true?"
        return reply(
            {
                "fact": sentence,
                "question": asked,
                "key_term": answer,
                "wrong_answers": ["a", "b"],
            }
        )

    fake_openai.chat_reply_for = question

    document = make_document("quiz")

    assert document.status == GeneratedDocument.Status.READY, document.error
    repairs = [
        request for request in fake_openai.chat_requests if len(request.body["messages"]) > 2
    ]
    told = [request.body["messages"][-1]["content"] for request in repairs]
    assert len(told) == 3
    assert "give it in 1 to 10 words" in told[0]
    assert "as a teacher would" in told[1]
    assert "names its own answer" in told[2]
    questions = document.data["questions"]
    assert len(questions) == len(seen)
    assert all(item["question"] == "What is true?" for item in questions)


def test_a_quiz_question_naming_its_own_answer_asks_for_it_with_a_gap_in_the_fact(
    fake_openai, studio_sources, make_document
):
    # As the 1.5B model asks in German: "Was ist die MTU?", key term "MTU".
    def question(body: dict) -> str:
        sentence = first_sentence(passage_of(body))
        term = max(sentence.rstrip(".").split()[1:], key=len)
        return reply(
            {
                "fact": sentence,
                "question": f"What is {term}?",
                "key_term": term,
                "wrong_answers": ["alpha", "beta"],
            }
        )

    fake_openai.chat_reply_for = question

    document = make_document("quiz")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert all(len(request.body["messages"]) == 2 for request in fake_openai.chat_requests)
    for item in document.data["questions"]:
        answer = item["options"][item["answer_index"]]
        assert item["question"].startswith("Fill in the gap: ")
        assert "_____" in item["question"] and answer not in item["question"]
        assert item["question"].removeprefix("Fill in the gap: ").replace("_____", answer) == (
            re.sub(r" \[\d+\]", "", item["explanation"])
        )


def test_a_quiz_answer_that_is_not_in_its_fact_is_asked_again(
    fake_openai, studio_sources, make_document
):
    # As the 1.5B model answered "Debian Seidel" to who translated it, the fact naming
    # Jens Seidel: words of the fact, but not as the fact says them.
    seen: set[str] = set()

    def question(body: dict) -> str:
        text = passage_of(body)
        words = first_sentence(text).rstrip(".").split()
        term = f"{words[0]} {words[-1]}" if text not in seen else " ".join(words[-2:])
        seen.add(text)
        return reply(
            {
                "fact": first_sentence(text),
                "question": "Which words end it?",
                "key_term": term,
                "wrong_answers": ["alpha", "beta"],
            }
        )

    fake_openai.chat_reply_for = question

    document = make_document("quiz")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert len(fake_openai.chat_requests) == 2 * len(seen)
    assert (
        "is not in the fact; copy the key term word for word"
        in (fake_openai.chat_requests[1].body["messages"][-1]["content"])
    )
    for item in document.data["questions"]:
        answer = item["options"][item["answer_index"]]
        assert answer in item["explanation"]


def test_a_wrong_option_that_is_part_of_the_right_one_is_left_out(
    fake_openai, studio_sources, make_document
):
    # "Debian" beside the right "Debian-System" in a gap question: both fit the gap.
    def question(body: dict) -> str:
        sentence = first_sentence(passage_of(body))
        words = sentence.rstrip(".").split()
        return reply(
            {
                "fact": sentence,
                "question": "Which words end it?",
                "key_term": " ".join(words[-2:]),
                "wrong_answers": [words[-1], " ".join(words[-3:]), "alpha"],
            }
        )

    fake_openai.chat_reply_for = question

    document = make_document("quiz")

    assert document.status == GeneratedDocument.Status.READY, document.error
    questions = document.data["questions"]
    assert questions
    for item in questions:
        assert item["options"][item["answer_index"]] != "alpha"
        assert [option for option in item["options"] if option == "alpha"] == ["alpha"]
        assert len(item["options"]) == 2


def test_a_wrong_option_the_question_names_is_left_out(fake_openai, studio_sources, make_document):
    # A gap in a list ("wie _____, openssl, stunnel4, …") with the list's others as options.
    def question(body: dict) -> str:
        sentence = first_sentence(passage_of(body))
        return reply(
            {
                "fact": sentence,
                "question": "Is it gamma, delta or what the fact ends with?",
                "key_term": sentence.rstrip(".").split()[-1],
                "wrong_answers": ["gamma", "alpha", "delta"],
            }
        )

    fake_openai.chat_reply_for = question

    document = make_document("quiz")

    assert document.status == GeneratedDocument.Status.READY, document.error
    questions = document.data["questions"]
    assert questions
    assert all(len(item["options"]) == 2 and "alpha" in item["options"] for item in questions)


def test_a_quiz_fact_that_is_no_whole_sentence_is_asked_again(
    fake_openai, studio_sources, make_document
):
    # Headings and contents copied as the fact: "Kapitel 12, Programmierung, Startimpulse".
    seen: set[str] = set()

    def question(body: dict) -> str:
        text = passage_of(body)
        sentence = first_sentence(text)
        fact = sentence if text in seen else sentence.rstrip(".")
        seen.add(text)
        return reply(
            {
                "fact": fact,
                "question": "Which words end it?",
                "key_term": " ".join(sentence.rstrip(".").split()[-2:]),
                "wrong_answers": ["alpha", "beta"],
            }
        )

    fake_openai.chat_reply_for = question

    document = make_document("quiz")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert len(fake_openai.chat_requests) == 2 * len(seen)
    assert (
        "the fact is not a whole sentence"
        in (fake_openai.chat_requests[1].body["messages"][-1]["content"])
    )
    assert len(document.data["questions"]) == len(seen)


def test_a_card_whose_front_is_a_sentence_is_asked_again(
    fake_openai, studio_sources, make_document
):
    seen: set[str] = set()

    def cards(body: dict) -> str:
        text = passage_of(body)
        sentence = first_sentence(text)
        front = heading_of(text)
        if text not in seen:
            seen.add(text)
            front = f"{sentence} which goes on and on for many more words"
        return reply({"cards": [{"front": front, "back": sentence}]})

    fake_openai.chat_reply_for = cards

    document = make_document("flashcards")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert len(fake_openai.chat_requests) == 2 * len(seen)
    assert (
        "make it a term or a short question"
        in fake_openai.chat_requests[1].body["messages"][-1]["content"]
    )
    assert all(len(card["front"].split()) <= 8 for card in document.data["cards"])


def test_a_card_whose_back_only_announces_its_answer_is_asked_again(
    fake_openai, studio_sources, make_document
):
    seen: set[str] = set()

    def cards(body: dict) -> str:
        text = passage_of(body)
        back = first_sentence(text)
        if text not in seen:
            back = "There are three key factors:"
        seen.add(text)
        return reply({"cards": [{"front": heading_of(text), "back": back}]})

    fake_openai.chat_reply_for = cards

    document = make_document("flashcards")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert len(fake_openai.chat_requests) == 2 * len(seen)
    assert "ends with a colon" in fake_openai.chat_requests[1].body["messages"][-1]["content"]
    assert not any(
        card["back"].rstrip(" []0123456789").endswith(":") for card in document.data["cards"]
    )


def test_a_card_whose_front_is_a_copied_line_is_asked_again_and_a_question_is_kept(
    fake_openai, studio_sources, make_document
):
    seen: set[str] = set()

    def cards(body: dict) -> str:
        text = passage_of(body)
        back = first_sentence(text)
        first = text not in seen
        seen.add(text)
        front = "getent passwd name account details of name shown" if first else heading_of(text)
        return reply(
            {"cards": [{"front": front, "back": back}, {"front": "Which one is it?", "back": back}]}
        )

    fake_openai.chat_reply_for = cards

    document = make_document("flashcards")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert len(fake_openai.chat_requests) == 2 * len(seen)
    assert (
        "neither a term nor a question"
        in (fake_openai.chat_requests[1].body["messages"][-1]["content"])
    )
    fronts = [card["front"] for card in document.data["cards"]]
    assert "Which one is it?" in fronts and not any("getent" in front for front in fronts)


def test_a_document_whose_time_runs_out_between_passages_fails_saying_so(
    fake_openai, studio_sources, make_document, settings
):
    settings.GENERATION_TIMEOUT_SECONDS = 2
    fake_openai.slow_seconds = 4
    fake_openai.fail_next("slow", skip=1, endpoint="completions")
    fake_openai.chat_reply_for = lambda body: reply(
        {"heading": heading_of(passage_of(body)), "sentences": [first_sentence(passage_of(body))]}
    )

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "GENERATION_TIMEOUT_SECONDS" in document.error


def test_a_bullet_cut_off_at_its_most_characters_is_left_out_of_its_slide(
    fake_openai, studio_sources, make_document
):
    def slide(body: dict) -> str:
        text = passage_of(body)
        sentence = first_sentence(text)
        cut = (sentence + " and so on") * 20
        return reply({"heading": heading_of(text), "bullets": [sentence, cut[:200]], "notes": ""})

    fake_openai.chat_reply_for = slide

    document = make_document("slides")

    assert document.status == GeneratedDocument.Status.READY, document.error
    bullets = [bullet for each in document.data["slides"] for bullet in each["bullets"]]
    assert bullets and all("and so on" not in bullet for bullet in bullets)
    assert document.pptx and document.pdf


def rows(*cells: list[str]) -> dict:
    """A table piece's reply: a row of named fields for each list of three cells."""
    fields = ("name", "what_it_is", "figure_or_date")
    return {"rows": [dict(zip(fields, c, strict=True)) for c in cells]}


def test_a_table_sets_out_the_things_each_passage_names_with_a_figure_it_gives(
    fake_openai, studio_sources, make_document
):
    def answer(body: dict) -> str:
        text = passage_of(body)
        figures = re.findall(r"\d[\d.,:]*(?: ?(?:%|cm|kg|nests|million))?", text)
        if not figures:
            return reply(rows(["Light", "a wave", "299,792 km/s"]))
        sentence = next(s for s in re.split(r"(?<=[.!?])\s", text) if figures[0] in s)
        named, said = " ".join(sentence.split()[:2]), " ".join(sentence.split()[2:5])
        return reply(
            rows(
                [named, said, figures[0]],
                [named + " again", said, "a lot"],
                [named + " too", said, f"{figures[0]} as the text said in 1990"],
                ["x" * 60, said, figures[0]],
            )
        )

    fake_openai.chat_reply_for = answer

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.title == "Table: Research"
    assert document.data["columns"] == ["Name", "What it is", "Figure or date"]
    rows_asked = fake_openai.chat_requests[0].body["response_format"]["json_schema"]["schema"]
    fields = rows_asked["properties"]["rows"]["items"]["required"]
    assert fields == ["name", "what_it_is", "figure_or_date"]  # a field per column
    table = [row["cells"] for row in document.data["rows"]]
    assert not any(cells[2] == "299,792 km/s" for cells in table)  # invented: no passage has it
    assert any("95 cm" in cells[2] or "1.4 million" in cells[2] for cells in table)
    # A "figure" without a digit, or a description with one, is no figure: left empty.
    assert all(cells[2] == "" for cells in table if cells[0].endswith((" again", " too")))
    # A cell stopped at its most characters is copied text cut off: its row is left out.
    assert not any("xxx" in cells[0] for cells in table)
    assert all(re.fullmatch(r"\[\d+\]", row["source"]) for row in document.data["rows"])


def test_a_table_row_that_is_a_sentence_cut_into_cells_is_asked_again(
    fake_openai, studio_sources, make_document
):
    def answer(body: dict) -> str:
        text, asked_again = passage_of(body), len(body["messages"]) > 2
        words = " ".join(line for line in text.splitlines() if not line.startswith("#")).split()
        words, sentence = words[:12], " ".join(words[:12])
        if asked_again:
            return reply(rows([" ".join(words[:2]), "a thing it names", ""]))
        return reply(
            rows(
                [" ".join(words[:3]), " ".join(words[3:7]), " ".join(words[7:])],
                [sentence, "", ""],
                [words[0], "1,742", ""],
            )
        )

    fake_openai.chat_reply_for = answer

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.READY, document.error
    repairs = [r.body["messages"][-1]["content"] for r in fake_openai.chat_requests]
    repairs = [text for text in repairs if "no row is usable" in text]
    assert repairs and "sentence cut into pieces" in repairs[0]
    assert "is a sentence" in repairs[0] and "does not say in words what the thing is" in repairs[0]
    kept = [row["cells"] for row in document.data["rows"]]
    # Kept: the repaired rows, and cut runs too short to be a sentence (a short passage's).
    assert kept and all(len(" ".join(cells).split()) < 8 for cells in kept)


def test_an_infographic_passage_with_nothing_to_show_costs_one_call(
    fake_openai, studio_sources, make_document
):
    def items(body: dict) -> str:
        text = passage_of(body)
        found = re.search(r"[^.\n]*\b(20\d\d|19\d\d)\b[^.\n]*", text)
        if not found:
            return reply({"figures": [], "timeline": []})
        return reply(
            {"figures": [], "timeline": [{"date": found.group(1), "event": found.group(0).strip()}]}
        )

    fake_openai.chat_reply_for = items

    document = make_document("infographic")

    assert document.status == GeneratedDocument.Status.READY, document.error
    requests = fake_openai.chat_requests
    assert all(len(request.body["messages"]) == 2 for request in requests)  # no repair
    dates = [event["date"] for event in document.data["timeline"]]
    assert "2016" in dates and "2019" in dates
    assert document.data["comparisons"] == []


def test_a_mind_map_is_a_branch_per_passage_under_the_notebook(
    fake_openai, studio_sources, make_document
):
    fake_openai.chat_reply_for = lambda body: reply(
        {"topic": heading_of(passage_of(body)), "ideas": ["Facts", "Figures", "facts"]}
    )

    document = make_document("mindmap")

    assert document.status == GeneratedDocument.Status.READY, document.error
    root = document.data["root"]
    assert root["label"] == "Research"
    labels = [branch["label"] for branch in root["children"]]
    assert "Grey herons" in labels and "Night trains" in labels
    assert len(labels) == len({label.lower() for label in labels})  # one branch per topic
    for branch in root["children"]:
        assert [child["label"] for child in branch["children"]] == ["Facts", "Figures"]


@pytest.mark.parametrize("audio_format", ["deep_dive", "debate", "brief"])
def test_an_audio_script_gives_each_passage_to_the_hosts_in_turn(
    fake_openai, owner, notebook, studio_sources, audio_format
):
    from generation.documents.services import generate_document, request_document

    def lines(body: dict) -> str:
        fields = body["response_format"]["json_schema"]["schema"]["required"]
        sentence = first_sentence(passage_of(body))
        return reply({field: f"{sentence} ({field})" for field in fields})

    fake_openai.chat_reply_for = lines
    document = request_document(
        user=owner, notebook=notebook, kind="audio", audio_format=audio_format, length="short"
    )
    generate_document(document_id=document.pk)
    document.refresh_from_db()

    assert document.status == GeneratedDocument.Status.READY, document.error
    turns = document.data["turns"]
    said = [turn["speaker"] for turn in turns]
    if audio_format == "brief":
        assert set(said) == {"A"}
    else:
        assert all(a != b for a, b in zip(said, said[1:], strict=False))  # never twice in a row
        assert "(line_b)" in turns[1]["text"]
    assert turns[0]["text"].startswith("Welcome. Today we talk about Research.")
    assert turns[-1]["text"] == "That is all for today."
    system = fake_openai.chat_requests[0].body["messages"][0]["content"]
    assert ("argues the other side" in system) == (audio_format == "debate")
    assert document.audio


def test_an_infographic_figure_or_date_its_passage_does_not_hold_is_left_out(
    fake_openai, studio_sources, make_document
):
    def items(body: dict) -> str:
        text = passage_of(body)
        if "In 2016 the Austrian railway" in text:
            return reply(
                {
                    "figures": [],
                    "timeline": [
                        {"date": "2016", "event": "the Austrian railway bought the sleepers"},
                        {"date": "2023-04-01", "event": "the Austrian railway bought sleepers"},
                    ],
                }
            )
        return reply({"figures": [], "timeline": []})

    fake_openai.chat_reply_for = items

    document = make_document("infographic")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert [event["date"] for event in document.data["timeline"]] == ["2016"]
    assert document.unsupported_dropped == 1


def test_a_mind_map_idea_that_is_a_sentence_is_left_out(fake_openai, studio_sources, make_document):
    long = "a sentence that goes on for far too many words to be a label"
    fake_openai.chat_reply_for = lambda body: reply(
        {"topic": heading_of(passage_of(body)), "ideas": ["Figures", long]}
    )

    document = make_document("mindmap")

    assert document.status == GeneratedDocument.Status.READY, document.error
    for branch in document.data["root"]["children"]:
        assert [child["label"] for child in branch["children"]] == ["Figures"]


def test_a_report_sentence_left_out_leaves_no_gap_behind(
    fake_openai, studio_sources, make_document
):
    def section(body: dict) -> str:
        text = passage_of(body)
        return reply(
            {
                "heading": heading_of(text),
                "sentences": ["Herons are the national bird of Peru.", first_sentence(text)],
            }
        )

    fake_openai.chat_reply_for = section

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.READY, document.error
    markdown = document.data["markdown"]
    assert "Peru" not in markdown
    assert "  " not in markdown
    assert all(not line.startswith(" ") for line in markdown.splitlines())


def test_an_infographic_item_without_a_number_or_a_year_is_no_item(
    fake_openai, studio_sources, make_document
):
    def items(body: dict) -> str:
        if "In 2016 the Austrian railway" not in passage_of(body):
            return reply({"figures": [], "timeline": []})
        return reply(
            {
                "figures": [
                    {"value": "Night trains", "label": "Night trains"},
                    {"value": "2016", "label": "V:2016"},
                ],
                "timeline": [
                    {"date": "Comfort", "event": "sleeper cabins"},
                    {"date": "2016", "event": "the Austrian railway bought the sleepers"},
                ],
            }
        )

    fake_openai.chat_reply_for = items

    document = make_document("infographic")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.data["figures"] == []
    assert [event["date"] for event in document.data["timeline"]] == ["2016"]


def test_an_audio_line_copied_from_the_page_is_asked_again(
    fake_openai, owner, notebook, studio_sources
):
    from generation.documents.services import generate_document, request_document

    asked: dict[str, int] = {}

    def lines(body: dict) -> str:
        text = passage_of(body)
        asked[text] = asked.get(text, 0) + 1
        sentence = first_sentence(text)
        if asked[text] == 1:
            return reply({"line_a": f"From herons.md: {sentence}", "line_b": "• 95 cm\n• 2 kg"})
        return reply({"line_a": "What does it say?", "line_b": sentence})

    fake_openai.chat_reply_for = lines
    document = request_document(
        user=owner, notebook=notebook, kind="audio", audio_format="deep_dive", length="short"
    )
    generate_document(document_id=document.pk)
    document.refresh_from_db()

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert set(asked.values()) == {2}
    said = " ".join(turn["text"] for turn in document.data["turns"])
    assert "From herons.md" not in said and "•" not in said
    repair = fake_openai.chat_requests[1].body["messages"][-1]["content"]
    assert "copied from the page" in repair


def test_a_german_section_under_the_english_heading_it_copied_is_asked_again(
    fake_openai, studio_sources, make_document
):
    german = (
        "Graureiher leben an Flüssen, Seen und Küsten in Europa und Asien, und ihr Bestand "
        "in Großbritannien ist zwischen den Jahren gewachsen."
    )

    def section(body: dict) -> str:
        text = passage_of(body)
        asked_again = len(body["messages"]) > 2
        # First the section's English title, copied; asked again, a German one.
        heading = "Die Reiher und ihre Brut" if asked_again else heading_of(text)
        return reply({"heading": heading, "sentences": [german]})

    fake_openai.chat_reply_for = section

    document = make_document("report", language="de")

    assert document.status == GeneratedDocument.Status.READY, document.error
    repairs = [r.body["messages"][-1]["content"] for r in fake_openai.chat_requests]
    assert any("is copied from the text; translate it. Write in German" in r for r in repairs)
    headings = re.findall(r"^## (.*)$", document.data["markdown"], re.M)
    assert "Die Reiher und ihre Brut" in headings
    assert not {"Grey herons", "Night trains"} & set(headings)


def test_a_table_row_named_by_the_pages_own_column_headings_is_left_out():
    passage = (
        "There are many web browser packages.\n"
        "package popcon size description\n"
        "chromium V:37, I:118 212471 Chromium, open-source browser from Google\n"
        "lynx V:12, I:124 1935 Lynx, a text browser\n"
    )
    reply_rows = rows(
        ["popcon", "a popularity count", ""],
        ["size", "the package's size", ""],
        ["chromium", "an open-source browser from Google", "V:37, I:118"],
        ["lynx", "a text browser", "1935"],
        ["debugfs", "a file system debugger", "e2fsprogs package"],
    )

    kept = table._own_rows(reply_rows, passage)["rows"]

    assert [cells[0] for cells in kept] == ["chromium", "lynx", "debugfs"]
    assert [cells[2] for cells in kept] == ["V:37, I:118", "1935", ""]  # a name is no figure


LYNX = "Lynx is a text browser."
BROWSERS = (
    "There are many web browser packages.\n"
    "package popcon size description\n"
    "chromium V:37, I:118 212471 Chromium, open-source browser from Google\n"
    "lynx V:12, I:124 1935 Lynx, a text browser\n"
)


@pytest.mark.parametrize(
    ("line", "copied"),
    [
        ("chromium V:37, I:118 212471 …", True),
        ("console-setup V:95, I:964 425 Linux console font and keytable utilities", True),
        ("popcon size description", True),
        ("Section 3.1.1: The power-on event", True),
        ("3.1.1 Stage 1: the UEFI", True),
        ("2.5 million packages are in the archive.", False),
        ("knockd V:0, I:3", True),
        ("Released 10 June 2023", False),
        ("Package, popcon, size.", True),
        ("Chromium is an open-source browser from Google.", False),
        ("Debian 12 was released on 10 June 2023.", False),  # a date is no table row
        ("The main archive holds 67,672 packages.", False),
    ],
)
def test_a_line_of_the_pages_table_is_told_from_a_claim(line, copied):
    assert pieces.table_line(line, BROWSERS) is copied


def test_slide_notes_copied_from_a_list_on_the_page_are_asked_again():
    copied = {
        "heading": "Archive media",
        "bullets": ["Acid free paper with ink lasts over 100 years."],
        "notes": "Optimistic write cycles: • 250,000+ cycles : Harddisk drive • 10,000+ cycles",
    }
    spoken = {**copied, "notes": "Paper outlives\nevery disk."}

    with pytest.raises(InvalidOutput, match="notes are copied"):
        slides.BY_PASSAGE.part(copied, 1)
    assert slides.BY_PASSAGE.part(spoken, 1)["slides"][0]["notes"] == "Paper outlives\nevery disk."


def test_a_report_sentence_copied_from_the_pages_table_is_left_out():
    section = {"heading": "Browsers", "sentences": ["Package popcon size description.", LYNX]}

    assert report.BY_PASSAGE.own_words is not None
    assert report.BY_PASSAGE.own_words(section, BROWSERS)["sentences"] == [LYNX]


def test_a_slide_bullet_copied_from_the_pages_table_is_left_out_and_asked_again_when_alone(
    fake_openai, studio_sources, make_document
):
    asked: list[str] = []

    def slide(body: dict) -> str:
        text = passage_of(body)
        sentence = first_sentence(text)
        first_time = text not in asked
        asked.append(text)
        copied = ["knockd V:0, I:3 109 …", "lynx V:12, I:124 1935"]
        bullets = copied if first_time else [sentence, *copied]
        return reply({"heading": heading_of(text), "bullets": bullets, "notes": ""})

    fake_openai.chat_reply_for = slide

    document = make_document("slides")

    assert document.status == GeneratedDocument.Status.READY, document.error
    bullets = [bullet for each in document.data["slides"] for bullet in each["bullets"]]
    assert bullets
    assert not [bullet for bullet in bullets if "V:" in bullet]
    repairs = [r for r in fake_openai.chat_requests if len(r.body["messages"]) > 2]
    assert repairs and "table" in repairs[0].body["messages"][-1]["content"]


@pytest.mark.parametrize(
    "question",
    [
        "What does the passage say about herons?",
        "What is the main topic of the table?",
        "Was ist das Hauptthema der Tabelle?",
        "Was steht in diesem Abschnitt?",
        "Was ist der Hauptfakt der Debian-Referenz?",
        "What is the key fact about Debian?",
    ],
)
def test_a_quiz_question_about_the_text_rather_than_its_subject_is_sent_back(question):
    reply_ = {
        "fact": "Herons wait.",
        "question": question,
        "key_term": "Ardea",
        "wrong_answers": [],
    }

    with pytest.raises(InvalidOutput, match="about the wording, not the subject"):
        quiz._part(reply_, 1)


def test_a_quiz_question_may_name_a_partition_table():
    reply_ = {
        "fact": "fdisk edits the partition table.",
        "question": "Which command edits the partition table of a disk?",
        "key_term": "fdisk",
        "wrong_answers": ["ls"],
    }

    assert quiz._part(reply_, 1)["questions"][0]["options"]


def test_a_german_card_pair_written_in_english_is_asked_again(
    fake_openai, studio_sources, make_document
):
    def cards(body: dict) -> str:
        if len(body["messages"]) > 2:  # asked again, with the reason
            front, back = "Graureiher", "Graureiher leben an Flüssen, Seen und Küsten in Europa."
        else:
            front, back = (
                "Grey herons",
                "Grey herons live along the rivers, lakes and coasts of Europe.",
            )
        return reply({"cards": [{"front": front, "back": back}]})

    fake_openai.chat_reply_for = cards

    document = make_document("flashcards", language="de")

    assert document.status == GeneratedDocument.Status.READY, document.error
    repairs = [r.body["messages"][-1]["content"] for r in fake_openai.chat_requests]
    assert any("written in English, not in German" in text for text in repairs)
    assert {card["front"] for card in document.data["cards"]} == {"Graureiher"}


def test_a_german_mind_map_topic_copied_from_the_english_page_is_asked_again(
    fake_openai, studio_sources, make_document
):
    def branch(body: dict) -> str:
        text = passage_of(body)
        if len(body["messages"]) > 2:
            return reply({"topic": "Vögel und Züge", "ideas": ["Graureiher", "Nachtzug"]})
        sentence = " ".join(first_sentence(text).split()[:4])  # the page's words, copied
        return reply({"topic": sentence, "ideas": ["Graureiher", "Nachtzug"]})

    fake_openai.chat_reply_for = branch

    document = make_document("mindmap", language="de")

    assert document.status == GeneratedDocument.Status.READY, document.error
    repairs = [r.body["messages"][-1]["content"] for r in fake_openai.chat_requests]
    assert any("is copied from the text; translate it" in text for text in repairs)
    topics = {branch["label"] for branch in document.data["root"]["children"]}
    assert topics == {"Vögel und Züge"}


def test_an_audio_line_stopped_at_its_most_characters_ends_at_its_last_sentence():
    from generation.documents.kinds import audio

    said = "Grey herons wait at the edge of the pond. "
    stopped = (said * 20)[: audio.TURN_CHARS]  # the grammar stopped it mid-word

    line = audio._spoken(stopped)

    assert line.endswith("of the pond.") and len(line) < audio.TURN_CHARS
    with pytest.raises(InvalidOutput, match="cut off"):
        audio._spoken("Herons " * 100)  # no sentence ended before the limit
