"""The paper's BLEU baseline: the original document against the concatenation of its passages.

The concatenated passages are the hypothesis and the document the single reference, scored with
sacrebleu's sentence-level BLEU (exponential smoothing, effective n-gram order). Duplicated
overlap lowers the n-gram precisions; dropped text triggers the brevity penalty; words cut at a
passage boundary become two tokens.

``tokenize`` picks sacrebleu's tokeniser: ``13a`` (default, the WMT standard), ``intl`` (Unicode
punctuation), ``char`` (characters), ``zh`` or ``none`` (whitespace only). sacrebleu's
``spm``/``flores*`` tokenisers download a model and its ``ja-mecab``/``ko-mecab`` tokenisers need
extra packages, so they are not offered. ``joiner`` is put between consecutive passages: a space
keeps words at a boundary apart, as they are in the document, where a chunker stripped the
whitespace between them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

OFFLINE_TOKENIZERS = ("13a", "intl", "char", "zh", "none")
DEFAULT_TOKENIZE = "13a"
DEFAULT_JOINER = " "


@dataclass(frozen=True)
class BleuResult:
    score: float
    signature: str


def document_bleu(
    document: str,
    passages: Sequence[str],
    *,
    tokenize: str = DEFAULT_TOKENIZE,
    joiner: str = DEFAULT_JOINER,
    lowercase: bool = False,
) -> BleuResult:
    """BLEU (0-100) of ``joiner.join(passages)`` against ``document``, with its sacrebleu
    signature (e.g. ``nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0``)."""
    if tokenize not in OFFLINE_TOKENIZERS:
        raise ValueError(
            f"unsupported BLEU tokenize {tokenize!r}; choose one of {list(OFFLINE_TOKENIZERS)}"
        )
    if not document.strip():
        raise ValueError("BLEU needs a non-empty document as reference")
    from sacrebleu.metrics import BLEU

    bleu = BLEU(tokenize=tokenize, lowercase=lowercase, effective_order=True)
    hypothesis = joiner.join(passages)
    score = bleu.sentence_score(hypothesis, [document])
    return BleuResult(score=float(score.score), signature=str(bleu.get_signature()))
