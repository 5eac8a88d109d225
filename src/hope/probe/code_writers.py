"""Code-written probe queries: offline, instant and deterministic.

Neither query copies its gold: a copy would be found by any chunking that keeps the sentence, so
it could not tell chunkers apart the way a real question does.

- ``cloze``: from each excerpt its most salient sentence, with its most salient phrase (the
  rarest content word and up to two content words beside it) removed, cut to a window of the
  most salient words so that a question stays about as long as a real one (``QUERY_WORDS``).
- ``keyword``: the most salient content words of the excerpts, taken from every excerpt in turn
  and listed from rarest to commonest (so never in the gold's word order).
- ``mixed``: each question a cloze or a keyword query, by the parity of its seed, so that neither
  style's bias (a cloze favours chunks that keep its sentence whole, keywords favour chunks dense
  in rare words) decides the ranking alone.
- ``topic``: the excerpts' words that carry the topic of the passage around them: content words
  ranked by how often they occur within ``TOPIC_CONTEXT`` characters of the gold times their
  IDF, ``TOPIC_WORDS`` of them, every excerpt in turn, in the gold's order. Real questions name
  what a passage is about ("How do spacer sequences influence recombination activity?"), words
  that recur through the region, rather than a sentence's rarest word; such a query is matched by
  every chunk of the region, and which chunking then covers the gold is what a fixed k measures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from hope.core.text import split_sentences
from hope.probe.salience import Salience, content_words, is_content
from hope.probe.writing import Draft, WritingTask

# Real questions of Chroma's set have 10 to 19 words (10th to 90th percentile).
QUERY_WORDS = 24
MIN_WORDS_PER_EXCERPT = 8
PHRASE_WORDS = 3
KEYWORD_SHARE = 0.4
MIN_KEYWORDS = 6
MAX_KEYWORDS = 16
# The topic writer's neighbourhood on each side of the gold and its query length (chosen before
# measuring; 6 or 12 words and 3,000 characters measured within the spread over question seeds).
TOPIC_CONTEXT = 1500
TOPIC_WORDS = 8


def _strip(token: str) -> str:
    return token.strip(".,;:!?\"'()[]{}“”‘’—–-*#_`")


def _salient_sentence(text: str, salience: Salience) -> str:
    sentences = [s.text for s in split_sentences(text)] or [text]
    return max(
        sentences,
        key=lambda s: max((salience.idf(w) for w in content_words(s)), default=0.0),
    )


def cloze(sentence: str, salience: Salience) -> list[str]:
    """The sentence's whitespace tokens with its most salient phrase removed."""
    tokens = sentence.split()
    scores = [salience.idf(_strip(t)) if is_content(_strip(t)) else 0.0 for t in tokens]
    if not tokens or max(scores) == 0.0:
        return tokens
    centre = scores.index(max(scores))
    low = high = centre
    while high - low + 1 < PHRASE_WORDS:
        left = scores[low - 1] if low > 0 else 0.0
        right = scores[high + 1] if high + 1 < len(tokens) else 0.0
        if max(left, right) == 0.0:
            break
        if right >= left:
            high += 1
        else:
            low -= 1
    return tokens[:low] + tokens[high + 1 :]


def salient_window(tokens: list[str], width: int, salience: Salience) -> list[str]:
    """The ``width`` consecutive tokens with the largest summed IDF of their content words."""
    if len(tokens) <= width:
        return tokens
    scores = [salience.idf(_strip(t)) if is_content(_strip(t)) else 0.0 for t in tokens]
    best = max(range(len(tokens) - width + 1), key=lambda i: sum(scores[i : i + width]))
    return tokens[best : best + width]


@dataclass
class CodeWriter:
    """What every code writer shares: the drawn excerpts kept as the gold, and a question worded
    by ``query`` from them (an empty query is no question)."""

    name: str = "code"
    kind: Literal["code", "llm"] = field(default="code")

    def query(
        self, corpus: str, salience: Salience, task: WritingTask, excerpts: tuple[str, ...]
    ) -> str:
        raise NotImplementedError

    def write(
        self, corpus: str, salience: Salience, tasks: Sequence[WritingTask]
    ) -> list[Draft | None]:
        drafts: list[Draft | None] = []
        for task in tasks:
            excerpts = tuple(corpus[s:e] for s, e in task.gold)
            question = self.query(corpus, salience, task, excerpts)
            drafts.append(Draft(question, excerpts, task.gold) if question else None)
        return drafts


def cloze_query(excerpts: Sequence[str], salience: Salience) -> str:
    """Each excerpt's salient sentence with its salient phrase removed, cut to a window."""
    width = max(MIN_WORDS_PER_EXCERPT, QUERY_WORDS // len(excerpts))
    parts = []
    for text in excerpts:
        tokens = cloze(_salient_sentence(text, salience), salience)
        parts.append(" ".join(salient_window(tokens, width, salience)))
    return " ".join(p for p in parts if p)


@dataclass
class ClozeWriter(CodeWriter):
    name: str = "cloze"

    def query(
        self, corpus: str, salience: Salience, task: WritingTask, excerpts: tuple[str, ...]
    ) -> str:
        return cloze_query(excerpts, salience)


def round_robin(ranked: Sequence[Sequence[str]], wanted: int) -> list[str]:
    """Up to ``wanted`` distinct words, the best remaining of each list in turn."""
    wanted = min(wanted, len({w for words in ranked for w in words}))
    chosen: list[str] = []
    depth = 0
    while len(chosen) < wanted:
        for words in ranked:
            if depth < len(words) and words[depth] not in chosen and len(chosen) < wanted:
                chosen.append(words[depth])
        depth += 1
    return chosen


def keywords(excerpts: Sequence[str], salience: Salience) -> list[str]:
    """The query's words: round-robin over the excerpts' salient words, rarest first overall."""
    ranked = [salience.ranked(text) for text in excerpts]
    distinct = len({w for words in ranked for w in words})
    wanted = min(distinct, max(MIN_KEYWORDS, min(MAX_KEYWORDS, round(KEYWORD_SHARE * distinct))))
    return sorted(round_robin(ranked, wanted), key=lambda w: -salience.idf(w))


def keyword_query(excerpts: Sequence[str], salience: Salience) -> str:
    return " ".join(keywords(excerpts, salience))


@dataclass
class KeywordWriter(CodeWriter):
    name: str = "keyword"

    def query(
        self, corpus: str, salience: Salience, task: WritingTask, excerpts: tuple[str, ...]
    ) -> str:
        return keyword_query(excerpts, salience)


@dataclass
class MixedWriter(CodeWriter):
    name: str = "mixed"

    def query(
        self, corpus: str, salience: Salience, task: WritingTask, excerpts: tuple[str, ...]
    ) -> str:
        style = cloze_query if task.seed % 2 == 0 else keyword_query
        return style(excerpts, salience)


def topic_words(
    corpus: str,
    gold: Sequence[tuple[int, int]],
    salience: Salience,
    context: int = TOPIC_CONTEXT,
    wanted: int = TOPIC_WORDS,
) -> list[str]:
    """The gold's topic words: ranked by count within ``context`` characters of the gold times
    IDF (ties: first occurrence), every excerpt in turn, returned in the gold's word order."""
    around = corpus[max(0, min(s for s, _ in gold) - context) : max(e for _, e in gold) + context]
    local = Counter(content_words(around))
    in_excerpts = [list(dict.fromkeys(content_words(corpus[s:e]))) for s, e in gold]
    ranked = [sorted(ws, key=lambda w: -local[w] * salience.idf(w)) for ws in in_excerpts]
    order = {w: i for i, w in reversed(list(enumerate(w for ws in in_excerpts for w in ws)))}
    return sorted(round_robin(ranked, wanted), key=order.__getitem__)


@dataclass
class TopicWriter(CodeWriter):
    name: str = "topic"

    def query(
        self, corpus: str, salience: Salience, task: WritingTask, excerpts: tuple[str, ...]
    ) -> str:
        return " ".join(topic_words(corpus, task.gold, salience))
