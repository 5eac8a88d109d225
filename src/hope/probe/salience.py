"""Which words of a passage carry its content: inverse document frequency over its sentences.

The code-written probe queries are made of the gold's salient words (a cloze drops the most
salient phrase, a keyword query keeps the most salient words), so salience decides what a query
asks for. IDF over the corpus' own sentences makes a word salient where it is rare in *this*
corpus, with no word list beyond a small English stopword set.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

_WORD = re.compile(r"[^\W\d_](?:[\w'’-]*\w)?")
# Scraped or serialised text (chat logs as JSON) keeps escapes such as a literal "\n": no word.
_ESCAPE = re.compile(r"\\[nrt]")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in into is
    it its itself just let me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    one two also may might must shall us got get gets like well yes okay ok oh yeah im dont its
    thats s t re ve ll d m""".split()  # noqa: SIM905 (a word list reads better as text)
)


def words(text: str) -> list[str]:
    """The words of ``text`` in order, as written (letters first; digits-only tokens are not)."""
    return _WORD.findall(_ESCAPE.sub(" ", text))


def content_words(text: str) -> list[str]:
    """Lower-cased words of at least three letters that are not stopwords, in order."""
    return [w for w in (w.lower() for w in words(text)) if len(w) >= 3 and w not in STOPWORDS]


def is_content(word: str) -> bool:
    lower = word.lower()
    return len(lower) >= 3 and lower not in STOPWORDS and bool(_WORD.fullmatch(word))


class Salience:
    """IDF of content words over a corpus' sentences; unseen words get the largest IDF."""

    def __init__(self, sentences: Iterable[str]):
        frequency: Counter[str] = Counter()
        n = 0
        for sentence in sentences:
            n += 1
            frequency.update(set(content_words(sentence)))
        self.n = max(n, 1)
        self._df = frequency

    def idf(self, word: str) -> float:
        return math.log((self.n + 1) / (self._df.get(word.lower(), 0) + 1)) + 1.0

    def ranked(self, text: str) -> list[str]:
        """Distinct content words of ``text``, most salient first (ties: first occurrence)."""
        distinct = list(dict.fromkeys(content_words(text)))
        return sorted(distinct, key=lambda w: -self.idf(w))
