"""``hope probe``: which chunker retrieves best for *your* corpus and retrieval setting, without
labels.

    hope probe --corpus manual.md [other.md ...] --chunkers fixed_500_o0 recursive_500 ...
    hope probe --documents docs.jsonl --passages passages.jsonl --k 5 --budget 1000 2500 5000

Probe questions with known gold spans are written from each corpus (code writers, offline), then
every chunking is measured on retrieving them (recall, precision and IoU at k, recall at each
character budget) with bootstrap intervals; the output ranks the chunkings and lists which pairs
differ significantly (paired bootstrap over questions). With several corpora the ranking is per
corpus and pooled. It ranks chunkings; its absolute recall is not what users' questions would get.
Defaults: conf/probe/default.yaml (``hope.pipeline.config_schema.ProbeParams``).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from hope.cli.cli_arguments import positive_int
from hope.core.io import read_jsonl, read_text, write_json_atomic
from hope.pipeline.config_schema import ProbeParams

DEFAULTS = ProbeParams()


def add_probe_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``probe`` on an argparse subparsers object (``hope probe ...``)."""
    from hope.probe import CODE_WRITERS, LLM_WRITERS

    parser = subparsers.add_parser(
        "probe",
        help="rank chunkers by retrieval of questions written from the corpus (no labels)",
        description=__doc__.split("\n\n")[0],
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--corpus", nargs="+", type=Path, help="UTF-8 text files, one corpus each (name: the stem)"
    )
    source.add_argument(
        "--documents",
        type=Path,
        help='JSON lines {"doc_id", "text", "domain"?}: one corpus per domain (default "corpus")',
    )
    chunking = parser.add_mutually_exclusive_group(required=True)
    chunking.add_argument("--chunkers", nargs="+", help="chunker configs under --conf-dir")
    chunking.add_argument(
        "--passages",
        type=Path,
        help='JSON lines {"doc_id", "chunker", "text", "start"?, "end"?} (doc_id of a --corpus '
        "file: its stem)",
    )
    parser.add_argument("--conf-dir", type=Path, default=Path("conf/chunker"))
    parser.add_argument("--embedder", default=DEFAULTS.embedder, help="retriever (minilm, ...)")
    parser.add_argument("--k", type=positive_int, default=DEFAULTS.k, help="passages retrieved")
    parser.add_argument(
        "--budget",
        type=positive_int,
        nargs="+",
        default=DEFAULTS.budgets,
        help="character budgets for recall at a budget; the middle one ranks",
    )
    parser.add_argument(
        "--questions", type=positive_int, default=DEFAULTS.questions, help="per corpus, at most"
    )
    parser.add_argument(
        "--writer",
        choices=[*sorted(CODE_WRITERS), *LLM_WRITERS],
        default=DEFAULTS.writer,
        help="a code writer (offline, instant) or an LLM writer: questions written by --llm "
        "(llm: excerpts copied verbatim; llm_sentences: sentences chosen by number)",
    )
    parser.add_argument(
        "--llm",
        default=DEFAULTS.llm,
        help="packaged llm config for --writer llm|llm_sentences (embedded, ...)",
    )
    parser.add_argument("--resamples", type=positive_int, default=DEFAULTS.resamples)
    parser.add_argument("--seed", type=int, default=DEFAULTS.seed)
    parser.add_argument("--output", type=Path, help="write the full result JSON here")
    parser.set_defaults(handler=run)
    return parser


def read_documents(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.corpus:
        names = [path.stem for path in args.corpus]
        if len(set(names)) < len(names):
            raise ValueError(f"--corpus: two files share a name: {names}")
        return [
            {"doc_id": path.stem, "domain": path.stem, "text": read_text(path, "corpus")}
            for path in args.corpus
        ]
    documents = read_jsonl(args.documents, "documents file")
    if not documents:
        raise ValueError(f"documents file {args.documents}: no documents")
    return [{"domain": "corpus", **document} for document in documents]


def read_chunkings(args: argparse.Namespace, documents: list[dict[str, Any]]) -> list[dict]:
    if args.passages is not None:
        passages = read_jsonl(args.passages, "passages file")
        if not passages:
            raise ValueError(f"passages file {args.passages}: no passages")
        known = {str(d["doc_id"]) for d in documents}
        stray = sorted({str(p.get("doc_id")) for p in passages} - known)
        if stray:
            raise ValueError(f"passages file {args.passages}: unknown doc_id(s) {stray[:5]}")
        return passages
    from hope.chunking.registry import load_chunkers
    from hope.pipeline.chunk_step import chunk_documents

    return chunk_documents(documents, load_chunkers(list(args.chunkers), args.conf_dir))


def _cell(measures: dict[str, Any], name: str) -> str:
    cell = measures[name]
    if not math.isfinite(cell["mean"]):
        return "n/a"
    return f"{cell['mean']:.3f} [{cell['low']:.3f}, {cell['high']:.3f}]"


def print_ranking(title: str, result: dict[str, Any], primary: str, k: int) -> None:
    print(f"{title}: {result['n_questions']} questions; ranked by {primary}")
    for rank, name in enumerate(result["rankings"][primary], start=1):
        measures = result["chunkings"][name]["measures"]
        print(
            f"  {rank}. {name:<24} {primary} {_cell(measures, primary)}   "
            f"recall@{k} {_cell(measures, f'recall@{k}')}   iou@{k} {_cell(measures, f'iou@{k}')}"
        )
    decided = [p for p in result["pairs"][primary] if p["significant"]]
    pairs = len(result["pairs"][primary])
    print(f"  significantly different pairs: {len(decided)} of {pairs}")
    for pair in decided:
        worse = pair["pair"][1] if pair["better"] == pair["pair"][0] else pair["pair"][0]
        print(f"    {pair['better']} > {worse} by {abs(pair['difference']):.3f}")
    for name, cell in result["chunkings"].items():
        if cell.get("status") != "ok":
            print(f"  {name}: not evaluable ({cell.get('reason')})")


def run(args: argparse.Namespace) -> int:
    from hope.models.factory import embedder_preset
    from hope.pipeline.probe_step import primary_measure, probe_writer, run_probe

    params = ProbeParams(
        writer=args.writer,
        llm=args.llm,
        questions=args.questions,
        k=args.k,
        budgets=list(args.budget),
        embedder=args.embedder,
        resamples=args.resamples,
        seed=args.seed,
    )
    settings = params.settings()
    documents = read_documents(args)
    passages = read_chunkings(args, documents)
    report, timings = run_probe(
        documents,
        passages,
        embedder_preset(params.embedder),
        settings,
        probe_writer(params.writer, params.llm),
    )
    primary = primary_measure(settings)
    for domain, result in report["domains"].items():
        print_ranking(domain, result, primary, settings.k)
    if len(report["domains"]) > 1:
        print_ranking("pooled", report["pooled"], primary, settings.k)
    print(
        "rankings of written questions at this setting, not users' recall "
        f"({sum(timings.values()):.1f} s)"
    )
    if args.output:
        write_json_atomic(args.output, report | {"timings_s": timings})
        print(f"wrote {args.output}")
    return 0
