"""A document for the summary tests: sentences that share a few frequent words."""

SENTENCES = [
    "Otters are aquatic mammals that live along rivers and coasts.",
    "Sea otters hold hands while they sleep so that the otters do not drift apart.",
    "The weather in the valley was mild that year.",
    "River otters dig dens in the banks of rivers and eat fish, frogs and crayfish.",
    "A small museum in the town sells postcards.",
    "Otters groom their dense fur for hours, because the fur keeps otters warm in cold water.",
    "Nobody remembers who built the old bridge.",
]
DOCUMENT = " ".join(SENTENCES)
