"""Words, sentences, definitions and token counts, as every part of Loupe that weighs text
counts them. A leaf: it imports no app of Loupe's, so any layer may use it.

- words.py: a text's terms (stemmed, without stop words), its sentences, its head;
- sentences.py: paragraphs rebuilt from a page's wrapped lines, the sentences worth quoting;
- definitions.py: the term a sentence defines;
- tokens.py: the token estimate that fits prompts into a context.
"""
