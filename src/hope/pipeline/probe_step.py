"""DVC stage ``probe``: a label-free retrieval ranking of the experiment's chunkers, per domain and
pooled (issue #32). This module is the stage's work; ``hope.stages.probe_stage`` is its ``main``,
and ``hope probe`` and ``hope-run``'s ``objective=probe_*`` call the same functions.

A domain's documents are joined into one corpus (file order, separated by a blank line, so no
sentence spans two documents), each chunker's passages are shifted onto it, and probe questions
written from that corpus (``hope.probe``) are retrieved from every chunking at the setting of
params.yaml ``probe:`` (embedder, k, character budgets). Pooled, each chunking's per-question
values of all domains are taken together, so the pooled interval and pairwise decisions resample
questions across domains. Rankings, not absolute recall, carry over to users' questions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hope.labelled.bootstrap import mean_interval
from hope.labelled.labelled_inputs import ChunkPassage
from hope.models.embeddings import Embedder
from hope.probe import ProbeSettings, ProbeWriter, probe_ranking
from hope.probe.probe_retrieval import pairwise_decisions, ranking

# Between two documents of one domain's corpus: a paragraph break, which the sentence splitter and
# every chunker treat as a boundary.
SEPARATOR = "\n\n"

# The measures a probe row shares with the labelled stage's rows (``hope.pipeline.labelled_step``),
# so probe and labelled chunker runs carry the same metric keys in MLflow.
ROW_MEASURES = ("recall", "precision", "iou")


@dataclass(frozen=True)
class DomainCorpus:
    """A domain's documents as one text; ``offsets`` maps each doc_id to where it starts."""

    domain: str
    text: str
    offsets: Mapping[str, int]


def domain_corpora(documents: Sequence[Mapping[str, Any]]) -> list[DomainCorpus]:
    """One corpus per domain (sorted by name), its documents in file order."""
    by_domain: dict[str, list[Mapping[str, Any]]] = {}
    for document in documents:
        by_domain.setdefault(str(document["domain"]), []).append(document)
    corpora = []
    for domain in sorted(by_domain):
        offsets, parts, position = {}, [], 0
        for document in by_domain[domain]:
            offsets[str(document["doc_id"])] = position
            parts.append(document["text"])
            position += len(document["text"]) + len(SEPARATOR)
        corpora.append(DomainCorpus(domain, SEPARATOR.join(parts), offsets))
    return corpora


def domain_chunkings(
    corpus: DomainCorpus, passages: Sequence[Mapping[str, Any]]
) -> dict[str, list[ChunkPassage]]:
    """Each chunker's passages of the domain's documents, with spans on the domain's corpus.

    A passage without a span is searched for in the corpus by ``hope.labelled``; one with a span
    is checked there (its text must be the corpus's characters at that span)."""
    chunkings: dict[str, list[ChunkPassage]] = {}
    for passage in passages:
        offset = corpus.offsets.get(str(passage["doc_id"]))
        if offset is None:
            continue
        start, end = passage.get("start"), passage.get("end")
        shifted = (
            ChunkPassage(passage["text"], start + offset, end + offset)
            if start is not None and end is not None
            else ChunkPassage(passage["text"])
        )
        chunkings.setdefault(str(passage["chunker"]), []).append(shifted)
    return chunkings


def pooled_result(
    results: Mapping[str, Mapping[str, Any]], settings: ProbeSettings
) -> dict[str, Any]:
    """Every chunking evaluable in all ``results`` (per domain), measured over all their
    questions: means with intervals, rankings and pairwise decisions, as for one corpus."""
    if not results:
        raise ValueError("no domain to pool")
    names = [
        name
        for name in next(iter(results.values()))["chunkings"]
        if all(r["chunkings"].get(name, {}).get("status") == "ok" for r in results.values())
    ]
    measures = settings.measure_names()
    rows: dict[str, dict[str, Any]] = {}
    for name in names:
        per_question = {
            m: [v for r in results.values() for v in r["chunkings"][name]["per_question"][m]]
            for m in measures
        }
        rows[name] = {
            "status": "ok",
            "n_passages": sum(r["chunkings"][name]["n_passages"] for r in results.values()),
            "measures": {
                m: mean_interval(
                    values,
                    n_resamples=settings.n_resamples,
                    seed=settings.seed,
                    confidence=settings.confidence,
                )
                for m, values in per_question.items()
            },
            "per_question": per_question,
        }
    return {
        "n_questions": sum(r["n_questions"] for r in results.values()),
        "chunkings": rows,
        "rankings": {m: ranking(rows, names, m) for m in measures},
        "pairs": {m: pairwise_decisions(rows, names, m, settings) for m in measures},
    }


def run_probe(
    documents: Sequence[Mapping[str, Any]],
    passages: Sequence[Mapping[str, Any]],
    embedder: Embedder,
    settings: ProbeSettings,
    writer: ProbeWriter | str,
    *,
    log: Any = None,
) -> tuple[dict[str, Any], dict[str, float]]:
    """(report, timings): the probe per domain and pooled. The report holds no wall time, so the
    same inputs give the same bytes; ``timings`` has each domain's writing and measuring time."""
    results: dict[str, dict[str, Any]] = {}
    timings: dict[str, float] = {}
    for corpus in domain_corpora(documents):
        chunkings = domain_chunkings(corpus, passages)
        if not chunkings:
            raise ValueError(f"domain {corpus.domain!r}: no passages of its documents")
        result = probe_ranking(corpus.text, chunkings, embedder, settings, writer)
        for step, seconds in result.pop("timings_s").items():
            timings[f"{corpus.domain}/{step}"] = seconds
        results[corpus.domain] = result
        if log is not None:
            best = result["rankings"][primary_measure(settings)][:1]
            log(f"{corpus.domain}: {result['n_questions']} questions; best {best}")
    report = {
        "settings": next(iter(results.values()))["settings"],
        # The measure the rankings are read by, so that a reader of the report (the leaderboard
        # beside HOPE, hope.analysis.probe_board) need not know the rule that picks it.
        "primary_measure": primary_measure(settings),
        "domains": results,
        "pooled": pooled_result(results, settings),
    }
    return report, timings


def probe_writer(writer: str, llm: str = "embedded", cache_path: str | None = None) -> ProbeWriter:
    """A code writer by name, or an LLM writer (``llm``: excerpts copied verbatim;
    ``llm_sentences``: sentences chosen by number) with the packaged ``llm`` config ``llm``
    (answers cached at ``cache_path``, so a rerun asks nothing again)."""
    from hope.probe import CODE_WRITERS, LLM_WRITERS, code_writer

    if writer in LLM_WRITERS:
        from hope.models.factory import llm_preset

        return LLM_WRITERS[writer](llm_preset(llm, cache_path))
    if writer not in CODE_WRITERS:
        known = [*sorted(CODE_WRITERS), *LLM_WRITERS]
        raise ValueError(f"probe.writer {writer!r} is not one of {known}")
    return code_writer(writer)


def primary_measure(settings: ProbeSettings) -> str:
    """The measure a ranking is read by: recall at the middle budget (2,500 characters by
    default, the labelled stage's budget)."""
    budgets = sorted(settings.budgets)
    return f"budget_recall@{budgets[len(budgets) // 2]}"


def _mean(result: Mapping[str, Any], chunker: str, measure: str) -> float | None:
    cell = result["chunkings"].get(chunker, {})
    if cell.get("status") != "ok":
        return None
    mean = cell["measures"][measure]["mean"]
    return round(mean, 6) if math.isfinite(mean) else None


def probe_rows(report: Mapping[str, Any], settings: ProbeSettings) -> list[dict[str, Any]]:
    """One row per (domain, chunker), then one per chunker pooled (domain ``pooled``): recall,
    precision and IoU at k and recall at the primary budget under the labelled stage's keys,
    recall at every budget as ``budget_recall_<chars>``."""
    k, primary = settings.k, primary_measure(settings)
    blocks = [*report["domains"].items(), ("pooled", report["pooled"])]
    rows = []
    for domain, result in blocks:
        for chunker in result["chunkings"]:
            row: dict[str, Any] = {
                "doc_id": domain,
                "domain": domain,
                "chunker": chunker,
                "n_passages": result["chunkings"][chunker].get("n_passages"),
            }
            row |= {m: _mean(result, chunker, f"{m}@{k}") for m in ROW_MEASURES}
            row["budget_recall"] = _mean(result, chunker, primary)
            for budget in settings.budgets:
                row[f"budget_recall_{budget}"] = _mean(result, chunker, f"budget_recall@{budget}")
            rows.append(row)
    return rows


def probe_metrics(report: Mapping[str, Any], settings: ProbeSettings) -> dict[str, Any]:
    """The stage's headline (``dvc metrics show``): per chunker the pooled means of the primary
    measure and of recall at k, the pooled ranking, and how many pairs were decided."""
    pooled, primary = report["pooled"], primary_measure(settings)
    recall = f"recall@{settings.k}"
    return {
        "measure": primary,
        "ranking": pooled["rankings"][primary],
        "budget_recall": {c: _mean(pooled, c, primary) for c in pooled["chunkings"]},
        "recall": {c: _mean(pooled, c, recall) for c in pooled["chunkings"]},
        "significant_pairs": sum(p["significant"] for p in pooled["pairs"][primary]),
        "pairs": len(pooled["pairs"][primary]),
        "questions": pooled["n_questions"],
    }
