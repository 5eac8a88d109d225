"""Labelled retrieval beside the label-free metric: Chroma's character-level measures.

Given a corpus, questions with gold character spans and a chunking, retrieve the top passages per
question with the configured embedder and measure recall, precision, IoU, precision-Ω and recall
at a fixed character budget, averaged over questions with seeded bootstrap intervals.
``hope labelled`` runs it on files.
"""

from hope.labelled.chunking_evaluation import LabelledSettings, evaluate_chunking
from hope.labelled.labelled_inputs import (
    ChunkPassage,
    GoldReference,
    LabelledInputError,
    LabelledQuestion,
    locate_passages,
)
from hope.labelled.measures import MEASURES, question_measures

__all__ = [
    "MEASURES",
    "ChunkPassage",
    "GoldReference",
    "LabelledInputError",
    "LabelledQuestion",
    "LabelledSettings",
    "evaluate_chunking",
    "locate_passages",
    "question_measures",
]
