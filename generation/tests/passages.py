"""Three short sources the answering tests ask about, and the passages a chat request
numbered."""

import re

HERONS = b"Grey herons wait motionless at the edge of the pond until a fish swims past."
TRAINS = b"The night train to Vienna leaves the central station at eleven each evening."
BREAD = b"Sourdough bread needs a starter that is fed with flour and water every day."


def prompt_passages(chat_request) -> dict[int, str]:
    """The numbered passages of the user prompt the model was sent: {n: text}."""
    prompt = chat_request.body["messages"][-1]["content"]
    found = re.findall(r"^\[(\d+)\] \([^)]*\)\n(.*?)\n$", prompt, flags=re.M)
    return {int(number): text for number, text in found}
