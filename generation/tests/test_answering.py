import pytest
from django.core.files.base import ContentFile

from billing.models import Usage
from generation import prompts
from generation.answering import answer_question
from generation.tests.passages import BREAD, HERONS, TRAINS, prompt_passages
from ingest.services import add_source
from library.models import Chunk
from notebooks.models import Citation, Conversation, Message
from providers.errors import ProviderError
from texts.errors import UserFacingError


@pytest.fixture
def library(fake_openai, notebook, add_ready_source):
    """Three one-chunk sources, so the passages' order follows the question's words."""
    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]


def test_an_empty_notebook_gets_a_refusal_without_any_model_call(fake_openai, owner, notebook):
    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    assert answer.message.mode == Message.Mode.REFUSAL
    assert answer.message.content == prompts.EMPTY_NOTEBOOK_REPLY
    assert answer.citations == []
    assert fake_openai.requests == []
    assert Usage.objects.count() == 0


def test_a_notebook_with_nothing_ready_gets_a_refusal_without_any_model_call(
    fake_openai, owner, notebook
):
    add_source(owner=owner, notebook=notebook, upload=ContentFile(HERONS, name="herons.txt"))

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    assert answer.message.mode == Message.Mode.REFUSAL
    assert answer.message.content == prompts.NOTHING_READY_REPLY
    assert fake_openai.requests == []
    assert Usage.objects.count() == 0


def test_an_empty_question_is_refused(owner, notebook):
    with pytest.raises(UserFacingError, match="empty"):
        answer_question(user=owner, notebook=notebook, question="   ")


def test_reply_markers_become_dense_citations_of_the_right_chunks(
    fake_openai, owner, notebook, library
):
    fake_openai.chat_replies.append("Claim one [2]. Claim two [1][9].")

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    passages = prompt_passages(fake_openai.chat_requests[0])
    assert passages[1] == HERONS.decode()  # the passage sharing the question's words leads
    assert answer.message.content == "Claim one [1]. Claim two [2]."
    assert answer.message.mode == Message.Mode.LLM
    assert answer.message.model == "fake-chat"
    first, second = answer.citations
    assert first.n == 1 and first.chunk.text == passages[2]
    assert second.n == 2 and second.chunk.text == passages[1]
    for citation in (first, second):
        chunk = Chunk.objects.get(pk=citation.chunk_id)
        assert citation.quote and citation.quote in chunk.text  # verbatim from the chunk
        assert citation.source_id == chunk.source_id
        assert citation.source_title == chunk.source.title
        assert citation.page is None
        assert isinstance(citation.similarity, float)
        assert 0 <= citation.similarity <= 1
    assert second.source_title == "herons"
    assert first.similarity < second.similarity


def test_citations_are_stored_with_the_message(fake_openai, owner, notebook, library):
    fake_openai.chat_replies.append("Herons wait [1]. Trains leave [2].")

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    stored = list(Citation.objects.filter(message=answer.message).order_by("n"))
    assert [(c.n, c.chunk_id, c.quote) for c in stored] == [
        (c.n, c.chunk_id, c.quote) for c in answer.citations
    ]
    assert len(stored) == 2


def test_the_prompt_holds_the_rules_the_documents_and_the_numbered_passages(
    fake_openai, owner, notebook, library
):
    fake_openai.chat_replies.append("Herons wait [1].")

    answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    messages = fake_openai.chat_requests[0].body["messages"]
    assert fake_openai.chat_requests[0].body["model"] == "fake-chat"
    assert [message["role"] for message in messages] == ["system", "user"]
    assert messages[0]["content"] == prompts.SYSTEM_PROMPT
    assert "Never invent a marker" in messages[0]["content"]
    prompt = messages[1]["content"]
    assert "Documents in this notebook:" in prompt
    for title in ("herons", "trains", "bread"):
        assert f"- {title} (Text)" in prompt
    assert sorted(prompt_passages(fake_openai.chat_requests[0]).values()) == sorted(
        text.decode() for text in (HERONS, TRAINS, BREAD)
    )
    # The citation rule comes again after the question, where small models heed it.
    assert prompt.endswith(
        f"Question: Where do herons wait?\n\n{prompts.citation_reminder('Where do herons wait?')}"
    )


def test_a_chat_call_writes_a_usage_row_with_tokens(fake_openai, owner, notebook, library):
    fake_openai.chat_replies.append("Herons wait motionless [1].")
    Usage.objects.all().delete()  # leave only the rows the question causes

    answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    chat = Usage.objects.get(kind="chat")
    assert (chat.user, chat.model) == (owner, "fake-chat")
    assert chat.input_tokens > 0
    assert chat.output_tokens == 4
    question_embedding = Usage.objects.get(kind="embedding")
    assert question_embedding.user == owner


def test_earlier_turns_are_sent_as_messages(fake_openai, owner, notebook, library):
    fake_openai.chat_replies += ["Herons wait by the pond [1].", "Until a fish swims past [1]."]
    first = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    answer_question(
        user=owner,
        notebook=notebook,
        question="For how long?",
        conversation=first.conversation,
    )

    messages = fake_openai.chat_requests[1].body["messages"]
    assert [message["role"] for message in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "Where do herons wait?"
    assert messages[2]["content"] == "Herons wait by the pond [1]."
    assert messages[3]["content"].endswith(
        f"Question: For how long?\n\n{prompts.citation_reminder('For how long?')}"
    )
    # Earlier turns go to the model, never into the search.
    assert fake_openai.embedding_requests[-1].body["input"] == ["For how long?"]


def test_a_chat_server_error_raises_a_readable_provider_error(
    fake_openai, owner, notebook, library
):
    fake_openai.fail_next("500", times=5, endpoint="chat/completions")

    with pytest.raises(ProviderError) as failure:
        answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    assert "chat model" in str(failure.value)
    assert "HTTP 500" in str(failure.value)
    assert not Message.objects.exists()  # no unanswered question is left behind
    assert not Conversation.objects.exists()
    assert not Usage.objects.filter(kind="chat").exists()


def test_a_garbage_chat_reply_raises_a_provider_error(fake_openai, owner, notebook, library):
    fake_openai.fail_next("garbage", endpoint="chat/completions")

    with pytest.raises(ProviderError, match="chat model"):
        answer_question(user=owner, notebook=notebook, question="Where do herons wait?")


def test_a_reply_without_markers_has_no_citations(fake_openai, owner, notebook, library):
    fake_openai.chat_replies.append("The passages do not say.")

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    assert answer.message.content == "The passages do not say."
    assert answer.citations == []


def test_the_reminder_read_last_names_the_questions_language(fake_openai, owner, notebook):
    """A small model reads the English reminder last and answers a German question in
    English unless the reminder says which language to write."""
    german = prompts.build_user_prompt(
        question="Wie verhindere ich, dass andere Benutzer meine Dateien löschen?",
        documents=[],
        passages=[("Handbuch", 3, "Das Sticky-Bit verhindert das Löschen fremder Dateien.")],
    )
    english = prompts.build_user_prompt(
        question="How do I keep other users from deleting my files?",
        documents=[],
        passages=[("Manual", 3, "The sticky bit keeps others from deleting your files.")],
    )

    assert german.endswith("Write the answer in German.")
    assert english.endswith("Write the answer in English.")


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Kdo byli podle článku původní vlastníci knihovny svitků?", " Write the answer in Czech."),
        ("关键词“网络推广”排名第一的日均消费是多少？", " Write the answer in Chinese."),
        ("Когда группа сообщила о наблюдениях за звездой S2?", " Write the answer in Russian."),
        # py3langid hears Shona in this one, a language no prompt should ask for: no line.
        ("What does Chikungunya cause?", ""),
    ],
)
def test_the_reminder_names_languages_beyond_the_interfaces(question, said):
    """Asked in Czech with an English reminder read last, the 1.5B model answered in
    English; told the language, in Czech."""
    reminder = prompts.citation_reminder(question)

    assert reminder == prompts.CITATION_REMINDER + said


@pytest.mark.parametrize(
    ("question", "standalone", "asks"),
    [
        ("Sollte ich meine Login-Shell mit chsh auf zsh umstellen?", "", True),
        ("Mein Rechner bootet langsam. Kann ich das messen?", "", True),
        ("Can I use UUIDs in /etc/fstab?", "", True),
        ("Which command shows the UUID of a partition?", "", False),
        ("Welche Pin-Priorität hat, z. B. bei apt-get install -t, das Archiv?", "", False),
        ("Mein Rechner bootet langsam. Mit welchem Befehl sehe ich das?", "", False),
        ("Summarise the chapter on networking.", "", False),
        # A follow-up is judged by its rewrite, which stands alone.
        ("And then?", "What happens after the package is uploaded?", False),
        ("And for root?", "Can root use sudo without a password?", True),
    ],
)
def test_a_question_that_asks_yes_or_no_is_told_to_say_what_the_passages_state_first(
    question, standalone, asks
):
    """Asked yes or no, the 1.5B model began with "Ja" where its passage said to avoid it."""
    reminder = prompts.citation_reminder(question, standalone=standalone)

    assert (prompts.YES_OR_NO_REMINDER in reminder) is asks
    assert reminder.startswith(prompts.CITATION_REMINDER)


def test_the_documents_list_names_the_passages_documents_first_and_at_most_ten(
    fake_openai, owner, notebook, library, add_ready_source
):
    for number in range(12):
        add_ready_source(
            notebook, f"Ledger {number} of the pond keeper.".encode(), f"l{number}.txt"
        )
    fake_openai.chat_replies.append("Herons wait [1].")

    answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    prompt = fake_openai.chat_requests[0].body["messages"][1]["content"]
    listed = prompt.split("Documents in this notebook:\n")[1].split("\n\n")[0].split("\n")
    assert len(listed) == prompts.PROMPT_DOCUMENTS + 1
    assert listed[-1] == "- … and 5 more"
    assert listed[0] == "- herons (Text)"  # the first passage's document
