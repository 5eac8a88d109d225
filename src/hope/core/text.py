"""Offline sentence splitting (pysbd: rule-based, no downloaded model data such as nltk's punkt)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# What pysbd's span search appends to each sentence: the whitespace after it (greedy).
_TRAILING_SPACE = re.compile(r"\s*")
_SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int
    end: int


@lru_cache(maxsize=4)
def _segmenter(language: str):
    import pysbd

    return pysbd.Segmenter(language=language, clean=False, char_span=True)


def split_sentences(text: str, language: str = "en") -> list[Sentence]:
    """Sentences of ``text`` with character offsets; blank-only pieces are dropped."""
    return list(_split_cached(text, language))


@lru_cache(maxsize=256)
def _split_cached(text: str, language: str) -> tuple[Sentence, ...]:
    # pysbd is all regular expressions (~15 ms per 1,000 words); a pipeline splits the same
    # document once per chunker.
    sentences: list[Sentence] = []
    segmenter = _segmenter(language)
    processed = segmenter.processor(text).process() if text else []
    for sent, span_start, _ in _char_spans(processed or [], text):
        stripped = sent.strip()
        if not stripped:
            continue
        leading = len(sent) - len(sent.lstrip())
        start = span_start + leading
        sentences.append(Sentence(stripped, start, start + len(stripped)))
    return tuple(sentences)


def _char_spans(sentences: list[str], text: str) -> list[tuple[str, int, int]]:
    """pysbd's ``Segmenter.sentences_with_char_spans`` (0.3.4), the same spans in linear time.

    pysbd looks for each sentence (plus the whitespace after it) with ``re.finditer`` from the
    start of the text and keeps the first match that ends after the previous span: the search
    and a new pattern per sentence make a document's splitting grow with the square of its
    length (27 s for a 273,000-character document, issue #35). Here the search starts where
    the kept match must start, which gives the same match:

    - The previous span ends after a maximal run of whitespace, so ``text[prior]`` is not
      whitespace, and a match whose sentence ends at or before ``prior`` ends there too. A kept
      match (end > prior) therefore starts at or after ``q0 = prior - len(sentence) + 1``.
    - From the start, ``finditer`` yields non-overlapping matches left to right. Unless one of
      them starts before ``q0`` and ends after it (a "straddler"), the matches it yields from
      ``q0`` on are those a search from ``q0`` yields. Only an earlier occurrence of the same
      sentence can straddle (a sentence repeated within its own length, or before a long run of
      whitespace); then pysbd's search from the start is run.
    """
    spans: list[tuple[str, int, int]] = []
    prior = 0
    for sent in sentences:
        found = _next_match(sent, text, prior)
        if found is not None:
            start, end = found
            spans.append((text[start:end], start, end))
            prior = end
    return spans


def _match_end(text: str, start: int, length: int) -> int:
    """End of the match of sentence-plus-whitespace whose sentence is ``text[start:][:length]``."""
    return _TRAILING_SPACE.match(text, start + length).end()


def _next_match(sent: str, text: str, prior: int) -> tuple[int, int] | None:
    """Start and end of the first match pysbd's scan from 0 yields that ends after ``prior``."""
    length = len(sent)
    q0 = prior - length + 1
    if length == 0 or q0 <= 0:
        return _pysbd_search(sent, text, prior)
    # A straddler holds q0 inside its sentence, or inside the whitespace after it; then its
    # sentence ends in the run of whitespace that holds q0. Either way it starts at or after lo.
    lo = q0 - length + 1
    if _SPACE.match(text, q0):
        run = q0
        while run > 0 and _SPACE.match(text, run - 1):
            run -= 1
        lo = run - length
    window_end = q0 - 1 + length  # occurrences that start before q0
    at = text.find(sent, max(0, lo), window_end)
    while at != -1:
        if _match_end(text, at, length) > q0:
            return _pysbd_search(sent, text, prior)
        at = text.find(sent, at + 1, window_end)
    # No match crosses q0: the scan from 0 and the scan from q0 yield the same matches from q0
    # on, and the one kept starts there. Each match is an occurrence of the sentence with the
    # whitespace after it; the next is searched from the end of the last.
    pos = q0
    while (at := text.find(sent, pos)) != -1:
        end = _match_end(text, at, length)
        if end > prior:
            return at, end
        pos = end
    return None


def _pysbd_search(sent: str, text: str, prior: int) -> tuple[int, int] | None:
    """pysbd's own search, from the start of the text (for the rare sentence it is needed)."""
    for match in re.finditer(rf"{re.escape(sent)}\s*", text):
        if match.end() > prior:
            return match.start(), match.end()
    return None
