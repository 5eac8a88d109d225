"""Which chunker retrieves best, without labels: probe questions written from the corpus itself.

Questions with known gold spans are written from the corpus (code writers: ``cloze``,
``keyword``, ``mixed``, ``topic``; LLM writers through any ``ChatModel``: ``llm`` copies excerpts,
``llm_sentences`` names sentences by number), in the shape of real questions
(Chroma's by default) and through Chroma's filters, then every chunking is measured on them with
the labelled measures of ``hope.labelled`` at the user's retrieval setting. What it tells: the
*ranking* of chunkings for retrieval at that setting, with intervals and significant pairwise
decisions; not absolute recall, and not what users will ask.
"""

from hope.probe.code_writers import ClozeWriter, KeywordWriter, MixedWriter, TopicWriter
from hope.probe.llm_writer import LLMWriter
from hope.probe.probe_questions import ProbeQuestion, ProbeSet, write_probe_questions
from hope.probe.probe_retrieval import (
    CODE_WRITERS,
    DEFAULT_WRITER,
    LLM_WRITERS,
    ProbeSettings,
    code_writer,
    measure_chunkings,
    probe_ranking,
)
from hope.probe.question_shape import CHROMA_SHAPE, QuestionShape, measure_shape
from hope.probe.sentence_writer import SentenceWriter
from hope.probe.writing import Draft, ProbeWriter, WritingTask

__all__ = [
    "CHROMA_SHAPE",
    "CODE_WRITERS",
    "DEFAULT_WRITER",
    "LLM_WRITERS",
    "ClozeWriter",
    "Draft",
    "KeywordWriter",
    "LLMWriter",
    "MixedWriter",
    "ProbeQuestion",
    "ProbeSet",
    "ProbeSettings",
    "ProbeWriter",
    "QuestionShape",
    "SentenceWriter",
    "TopicWriter",
    "WritingTask",
    "code_writer",
    "measure_chunkings",
    "measure_shape",
    "probe_ranking",
    "write_probe_questions",
]
