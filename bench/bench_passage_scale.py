"""Passage-scale benchmark: one document with 1,000, 5,000 and 20,000 passages, paper profile,
simulated LLM server (issue #35).

Every passage is a focus passage under the paper profile, and each of its questions retrieves
its top-k from all N passages, so a document's scoring is quadratic unless each retrieval is
cheap: before #35 the 5,000-passage case below did not finish in 900 s. Each size is scored in a
child process (its own peak memory, a warm interpreter, a fresh response cache) against
``python -m hope.testing`` in another process with a fixed latency; reported per size: wall time
against the LLM bound (requests x latency / concurrency), our CPU (the scoring process: client,
embedding, retrieval, evidence) per request and per scored item, the CPU of the retrieval alone,
and peak resident memory against the size of the embedding matrix. Results:
bench/results/passage_scale.json (``make bench-passage-scale``).

Targets (issue #35): CPU per scored item within 1.5x from the smallest to the largest size; wall
time within 1.2x of the LLM bound at every size; peak memory growing no faster than the
embedding matrix (its growth ratio from the smallest size at most the matrix's).

Workload: ``workloads.workload``'s passages (distinct factual sentences, four to a passage),
one per line of the document, so every passage asks its own questions. The time of the sentence
split (once per document, inside each run) is also measured alone, with the same text as one
line beside it: pysbd is still quadratic in the length of a line. Embedder: the lexical
HashingEmbedder, as in bench_scale.py, because the default MiniLM embeds one text at a time: its
cost per text is measured here separately and projected onto the texts each scored item embeds
(``minilm_projection``), so the record shows what the real embedder would add. The duplicate
case (the issue's reproduction: the sample news document's ``fixed_500_o0`` passages repeated
to 5,000) runs with MiniLM itself.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
from harness import REPO, spread
from workloads import RssSampler, simulated_llm, simulated_server, workload

NEWS = REPO / "src" / "hope" / "corpora" / "sample" / "news.txt"


def manual_workload(n: int) -> tuple[str, list[str]]:
    """``workloads.workload``'s distinct passages, one per line of the document, as a
    manual's paragraphs are (pysbd still takes time quadratic in the length of a line: a
    one-line document is measured apart, ``sentence_split``)."""
    _, passages = workload(n)
    return "\n".join(passages), passages


def duplicate_workload(n: int) -> tuple[str, list[str]]:
    """The sample news document's fixed_500_o0 passages, repeated in order up to ``n``."""
    from hope.chunking.registry import load_chunkers

    document = NEWS.read_text(encoding="utf-8")
    (chunker,) = load_chunkers(["fixed_500_o0"], REPO / "conf" / "chunker")
    distinct = [p.text for p in chunker.chunk(document, "news")]
    return document, [distinct[i % len(distinct)] for i in range(n)]


# --- the child: one scoring run --------------------------------------------------------------


def child(args: argparse.Namespace) -> None:
    import asyncio

    from hope.core.evaluator import HopeEvaluator
    from hope.core.hope_settings import load_profile
    from hope.core.metrics import equations
    from hope.core.response_cache import ResponseCache
    from hope.models.embeddings import CachingEmbedder, HashingEmbedder
    from hope.models.factory import build_embedder

    def build(cache_path: Path):
        cache = ResponseCache(cache_path)
        llm = simulated_llm(args.base_url, args.concurrency, cache)
        if args.embedder == "minilm":
            embedder = build_embedder(cache=cache)
        else:
            embedder = CachingEmbedder(HashingEmbedder(), cache)
        return llm, HopeEvaluator(llm, embedder, load_profile("paper", progress=False))

    async def score(evaluator, llm, document, passages):
        try:
            return await evaluator.aevaluate(document, passages)
        finally:
            await llm.aclose()

    # Warm the interpreter (lazy imports, the sentence splitter, the embedding model) on other
    # text: the run measured is a cold cache, not a cold process.
    llm, evaluator = build(Path(args.cache).with_suffix(".warmup"))
    asyncio.run(score(evaluator, llm, *workload(2)))

    # The retrieval's own CPU, on the event loop's thread (thread_time: the embedding worker
    # thread runs meanwhile and is not retrieval).
    retrieval = {"cpu_s": 0.0, "calls": 0, "queries": 0}
    top_k = equations.PassageIndex.top_k

    def timed_top_k(self, queries, k, *, exclude=()):
        started = time.thread_time()
        try:
            return top_k(self, queries, k, exclude=exclude)
        finally:
            retrieval["cpu_s"] += time.thread_time() - started
            retrieval["calls"] += 1
            retrieval["queries"] += len(queries) if getattr(queries, "ndim", 1) > 1 else 1

    equations.PassageIndex.top_k = timed_top_k

    if args.workload == "duplicates":
        document, passages = duplicate_workload(args.passages)
    else:
        document, passages = manual_workload(args.passages)
    llm, evaluator = build(Path(args.cache))
    sampler = RssSampler().start()
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    result = asyncio.run(score(evaluator, llm, document, passages))
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    sampler.stop()
    usage = result.usage["llm"]
    stats = evaluator.embedder.stats()
    if args.texts_out:
        Path(args.texts_out).write_text(json.dumps(embedded_texts(result, passages)), "utf-8")
    dim = evaluator.embedder.lookup(passages[:1]).shape[1]
    print(
        json.dumps(
            {
                "wall_s": wall,
                "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
                "passages": len(passages),
                "distinct_passages": len(set(passages)),
                "document_chars": len(document),
                "requests": usage["requests"],
                "cache_hits": usage["cache_hits"],
                "failures": len(result.failures),
                "items": {name: count.total for name, count in result.counts.items()},
                "texts_embedded": stats["texts_computed"],
                "embedding_dim": dim,
                "retrieval": retrieval,
                "rss_before_scoring_mib": sampler.first_mib,
                "peak_rss_scoring_mib": sampler.peak_mib,
                "hope": result.hope,
            }
        )
    )


def embedded_texts(result, passages: list[str]) -> list[str]:
    """The distinct texts a run embedded, as its evidence shows them: passages, statements,
    questions, both answers of each question, and each segment's true statement."""
    texts = list(passages)
    for record in result.passages:
        texts += record["concept_unity"].get("statements") or []
        for question in record["semantic_independence"].get("questions") or []:
            texts += [question["question"], question["answer_alone"] or ""]
            texts.append(question["answer_with_context"] or "")
    texts += [s["true_statement"] or "" for s in result.segments]
    return [t for t in dict.fromkeys(texts) if t]


def split_child(args: argparse.Namespace) -> None:
    """Time of ``split_sentences`` (inside each scoring run, once per document) on the benchmark
    document and on the same text as one line."""
    from hope.core.text import split_sentences

    document, passages = manual_workload(args.passages)
    timings = {}
    for name, text in (("one_passage_per_line", document), ("one_line", " ".join(passages))):
        if name == "one_line" and args.passages > args.one_line_max:
            continue
        started = time.process_time()
        split_sentences(text)
        timings[name] = {"chars": len(text), "cpu_s": round(time.process_time() - started, 3)}
    print(json.dumps(timings))


def minilm_child(args: argparse.Namespace) -> None:
    """MiniLM's CPU and wall time per text on texts a scored run embedded."""
    from hope.models.factory import build_embedder

    texts = json.loads(Path(args.texts).read_text(encoding="utf-8"))
    embedder = build_embedder()  # no cache: every text is computed
    embedder.embed(["warm up the model"])
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    embedder.embed(texts)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(json.dumps({"texts": len(texts), "cpu_s": cpu, "wall_s": wall}))


# --- the parent --------------------------------------------------------------------------------


def run_child(args, *extra: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", *extra]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"child failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def score_run(args, url: str, tmp: Path, workload_name: str, n: int, embedder: str, tag: str):
    run = run_child(
        args,
        *("--workload", workload_name, "--passages", str(n), "--embedder", embedder),
        *("--cache", str(tmp / f"{tag}.sqlite"), "--base-url", url),
        *("--concurrency", str(args.concurrency), "--texts-out", str(tmp / f"{tag}.texts")),
    )
    run["scored_items"] = sum(run["items"].values())
    return run


def summarise(args, runs: list[dict[str, Any]]) -> dict[str, Any]:
    first = runs[0]
    bound = first["requests"] * args.latency / args.concurrency
    walls = [r["wall_s"] for r in runs]
    matrix_bytes = first["passages"] * first["embedding_dim"] * 4  # float32 rows
    return {
        "passages": first["passages"],
        "distinct_passages": first["distinct_passages"],
        "document_chars": first["document_chars"],
        "requests": first["requests"],
        "scored_items": first["scored_items"],
        "items": first["items"],
        "failures": first["failures"],
        "llm_bound_s": round(bound, 3),
        "wall_s": spread(walls, digits=3),
        "wall_ratio_to_bound": round(statistics.median(walls) / bound, 3) if bound else None,
        "cpu_s": spread([r["cpu_s"] for r in runs], digits=3),
        "cpu_ms_per_request": spread(
            [1e3 * r["cpu_s"] / r["requests"] for r in runs if r["requests"]], digits=4
        ),
        "cpu_ms_per_scored_item": spread(
            [1e3 * r["cpu_s"] / r["scored_items"] for r in runs], digits=4
        ),
        "retrieval_cpu_ms_per_scored_item": spread(
            [1e3 * r["retrieval"]["cpu_s"] / r["scored_items"] for r in runs], digits=4
        ),
        "retrieval_calls": first["retrieval"]["calls"],
        "retrieval_queries": first["retrieval"]["queries"],
        "texts_embedded": first["texts_embedded"],
        "embedding_dim": first["embedding_dim"],
        "embedding_matrix_mib": round(matrix_bytes / 2**20, 3),
        "rss_before_scoring_mib": spread([r["rss_before_scoring_mib"] for r in runs], digits=1),
        "peak_rss_scoring_mib": spread([r["peak_rss_scoring_mib"] for r in runs], digits=1),
        "hope_equal_across_repeats": len({r["hope"] for r in runs}) == 1,
        "hope": first["hope"],
    }


def minilm_projection(args, texts_path: Path, smallest: dict[str, Any]) -> dict[str, Any]:
    """MiniLM's measured cost per text, on a seeded sample of the texts the smallest size's run
    embedded, times the texts each scored item embeds there."""
    import random

    texts = json.loads(texts_path.read_text(encoding="utf-8"))
    sample = random.Random(35).sample(texts, min(args.minilm_sample, len(texts)))
    path = texts_path.with_name("minilm-sample.json")
    path.write_text(json.dumps(sample), encoding="utf-8")
    measured = run_child(args, "--minilm", "--texts", str(path))
    per_text_ms = 1e3 * measured["cpu_s"] / measured["texts"]
    texts_per_item = smallest["texts_embedded"] / smallest["scored_items"]
    projected = per_text_ms * texts_per_item
    measured_per_item = smallest["cpu_ms_per_scored_item"]["median"]
    return {
        "texts_timed": measured["texts"],
        "texts": f"a seeded sample of the {len(texts)} distinct texts (passages, statements, "
        f"questions, answers, true statements) embedded at {smallest['passages']} passages",
        "cpu_ms_per_text": round(per_text_ms, 3),
        "wall_ms_per_text": round(1e3 * measured["wall_s"] / measured["texts"], 3),
        "texts_embedded_per_scored_item": round(texts_per_item, 3),
        "projected_cpu_ms_per_scored_item": round(projected, 3),
        "cpu_ms_per_scored_item_measured_with_hashing": measured_per_item,
        # Against the time the LLM leaves: above it, MiniLM on these cores sets the wall time.
        "projected_minilm_cpu_s_at_smallest_size": round(
            projected * smallest["scored_items"] / 1e3, 1
        ),
        "llm_bound_s_at_smallest_size": smallest["llm_bound_s"],
        "note": (
            "The distinct-passage sizes are scored with the hashing embedder: MiniLM "
            "(sentence-transformers, one text at a time) costs the CPU per scored item above, on "
            "top of the measured figure; it embeds each text once, so it adds the same amount "
            "per item at every size and does not change how CPU per item scales with N."
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each size")
    parser.add_argument(
        "--repeats-largest", type=int, default=None, help="runs of the largest size (--repeats)"
    )
    parser.add_argument("--duplicates", type=int, default=5000, help="0: skip the case")
    parser.add_argument("--duplicate-repeats", type=int, default=3)
    parser.add_argument("--minilm-sample", type=int, default=200, help="0: skip")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--output", default=str(REPO / "bench/results/passage_scale.json"))
    parser.add_argument(
        "--table", action="store_true", help="print the README's table of --output and exit"
    )
    # child modes
    parser.add_argument(
        "--only-duplicate-case",
        action="store_true",
        help="rerun only the duplicate case into the existing --output record, with its own "
        "provenance (the embedder it measures changed after the sizes were measured)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--minilm", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--texts", help=argparse.SUPPRESS)
    parser.add_argument("--workload", choices=["distinct", "duplicates"], help=argparse.SUPPRESS)
    parser.add_argument("--passages", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--embedder", choices=["hashing", "minilm"], help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--texts-out", help=argparse.SUPPRESS)
    parser.add_argument("--split", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--one-line-max",
        type=int,
        default=1000,
        help="largest size whose one-line document is split for the record (quadratic)",
    )
    args = parser.parse_args()
    if args.child and args.minilm:
        minilm_child(args)
        return
    if args.child and args.split:
        split_child(args)
        return
    if args.child:
        child(args)
        return
    if args.table:
        print(readme_table(json.loads(Path(args.output).read_text(encoding="utf-8"))))
        return

    bench_run = harness.start()  # the code measured: before the runs, so a later edit cannot
    # relabel it
    if args.only_duplicate_case:
        if not Path(args.output).is_file():
            parser.error(f"--only-duplicate-case: {args.output} does not exist")
        with tempfile.TemporaryDirectory() as tmp, simulated_server(args.latency) as (url, _):
            case = duplicate_case(args, url, Path(tmp))
        # The rest of the record keeps its own block; the case carries this run's.
        report = bench_run.merge_section(args.output, "duplicate_case", case)
        print(json.dumps(report["duplicate_case"]["wall_s"], indent=2))
        return

    sizes = sorted(args.sizes)
    report: dict[str, Any] = {
        "benchmark": "passage_scale",
        "workload": {
            "profile": "paper (every passage a focus passage; 5 questions, top-3 each)",
            "document": "workloads.workload's passages (distinct factual sentences, 4 per "
            "passage), one per line",
            "embedder": "hashing (MiniLM: see minilm_projection and the duplicate case)",
            "latency_s": args.latency,
            "concurrency": args.concurrency,
            "repeats": args.repeats,
            "repeats_largest": args.repeats_largest or args.repeats,
            "scored_item": "a focus passage's concept unity, its semantic independence, or an "
            "information-preservation segment",
        },
        "sizes": [],
    }
    with tempfile.TemporaryDirectory() as tmp, simulated_server(args.latency) as (url, stats):
        tmp = Path(tmp)
        for n in sizes:
            repeats = args.repeats_largest if n == sizes[-1] and args.repeats_largest else None
            runs = []
            for repeat in range(repeats or args.repeats):
                run = score_run(args, url, tmp, "distinct", n, "hashing", f"d{n}-{repeat}")
                print(f"  {n} passages #{repeat + 1}: {run['wall_s']:.1f} s", file=sys.stderr)
                runs.append(run)
            split = run_child(
                args, "--split", "--passages", str(n), "--one-line-max", str(args.one_line_max)
            )
            report["sizes"].append({**summarise(args, runs), "sentence_split": split})
            report["targets"] = targets(report["sizes"])
            bench_run.write_record(args.output, report)  # what is measured so far survives a kill
        if args.minilm_sample:
            texts = tmp / f"d{sizes[0]}-0.texts"
            report["minilm_projection"] = minilm_projection(args, texts, report["sizes"][0])
            bench_run.write_record(args.output, report)
        if args.duplicates:
            report["duplicate_case"] = duplicate_case(args, url, tmp)
            bench_run.write_record(args.output, report)
    report["server"] = stats
    bench_run.write_record(args.output, report)
    print(json.dumps(report["targets"], indent=2))


def duplicate_case(args: argparse.Namespace, url: str, tmp: Path) -> dict[str, Any]:
    runs = []
    for repeat in range(args.duplicate_repeats):
        run = score_run(args, url, tmp, "duplicates", args.duplicates, "minilm", f"dup-{repeat}")
        print(f"  duplicates #{repeat + 1}: {run['wall_s']:.1f} s", file=sys.stderr)
        runs.append(run)
    return {
        "what": f"sample news document, fixed_500_o0 passages repeated to "
        f"{args.duplicates}; MiniLM embedder (issue #35: not finished after 900 s)",
        **summarise(args, runs),
    }


def targets(sizes: list[dict[str, Any]]) -> dict[str, Any]:
    first, last = sizes[0], sizes[-1]
    per_item = [s["cpu_ms_per_scored_item"]["median"] for s in sizes]
    rss_growth = last["peak_rss_scoring_mib"]["median"] / first["peak_rss_scoring_mib"]["median"]
    matrix_growth = last["embedding_matrix_mib"] / first["embedding_matrix_mib"]
    return {
        "sizes_measured": [s["passages"] for s in sizes],
        "cpu_per_item_max_over_min": round(max(per_item) / min(per_item), 3),
        "cpu_per_item_flat_within_1.5x": max(per_item) / min(per_item) <= 1.5,
        "wall_ratio_to_bound_each_size": [s["wall_ratio_to_bound"] for s in sizes],
        "wall_within_1.2x_bound_every_size": all(s["wall_ratio_to_bound"] <= 1.2 for s in sizes),
        "peak_rss_growth_smallest_to_largest": round(rss_growth, 3),
        "embedding_matrix_growth_smallest_to_largest": round(matrix_growth, 3),
        "peak_rss_grows_no_faster_than_embedding_matrix": rss_growth <= matrix_growth,
    }


def readme_table(report: dict[str, Any]) -> str:
    """The README's passage-scale table and target lines, every figure from ``report``."""

    def cell(summary: dict[str, Any], fmt: str) -> str:
        if summary["n"] == 1:
            return f"{summary['median']:{fmt}}"
        return f"{summary['median']:{fmt}} ({summary['min']:{fmt}}-{summary['max']:{fmt}})"

    block = report["provenance"]
    dirty = ", dirty tree" if block["dirty"] else ""
    runs = ", ".join(f"{s['passages']:,}: {s['wall_s']['n']}" for s in report["sizes"])
    lines = [
        f"Result (`bench/results/passage_scale.json`, commit `{(block['commit'] or '?')[:7]}`"
        f"{dirty}, {block['machine']['cores']} CPU cores, load {block['load_at_start']} at the "
        "start; "
        f"runs per size {runs}; medians, min-max in brackets):",
        "",
        "| passages | requests | scored items | LLM bound (s) | wall (s) | wall / bound "
        "| CPU / request (ms) | CPU / scored item (ms) | of which retrieval (ms) "
        "| embedding matrix (MiB) | peak RSS (MiB) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in report["sizes"]:
        lines.append(
            f"| {s['passages']:,} | {s['requests']:,} | {s['scored_items']:,} "
            f"| {s['llm_bound_s']:.1f} | {cell(s['wall_s'], '.1f')} "
            f"| {s['wall_ratio_to_bound']:.3f} | {cell(s['cpu_ms_per_request'], '.2f')} "
            f"| {cell(s['cpu_ms_per_scored_item'], '.2f')} "
            f"| {cell(s['retrieval_cpu_ms_per_scored_item'], '.2f')} "
            f"| {s['embedding_matrix_mib']:.1f} | {cell(s['peak_rss_scoring_mib'], '.0f')} |"
        )
    t = report["targets"]

    def met(ok: bool) -> str:
        return "met" if ok else "missed"

    lines += [
        "",
        f"- **CPU per scored item within 1.5x: {met(t['cpu_per_item_flat_within_1.5x'])}** "
        f"(largest over smallest median {t['cpu_per_item_max_over_min']}x).",
        f"- **Wall within 1.2x the LLM bound at every size: "
        f"{met(t['wall_within_1.2x_bound_every_size'])}** "
        f"({', '.join(str(r) for r in t['wall_ratio_to_bound_each_size'])}).",
        f"- **Peak RSS growing no faster than the embedding matrix: "
        f"{met(t['peak_rss_grows_no_faster_than_embedding_matrix'])}** "
        f"({t['peak_rss_growth_smallest_to_largest']}x against "
        f"{t['embedding_matrix_growth_smallest_to_largest']}x).",
    ]
    dup = report.get("duplicate_case")
    if dup:
        lines.append(
            f"- **The issue's case** ({dup['distinct_passages']} distinct news passages repeated "
            f"to {dup['passages']:,}, MiniLM): {cell(dup['wall_s'], '.1f')} s "
            f"({dup['wall_s']['n']} run{'s' if dup['wall_s']['n'] > 1 else ''}, "
            f"{dup['requests']} requests, "
            f"{cell(dup['cpu_ms_per_scored_item'], '.2f')} ms of CPU per scored item"
            + (
                f"; measured at commit `{dup['provenance']['commit'][:7]}`"
                if dup.get("provenance", {}).get("commit")
                else ""
            )
            + ")."
        )
    mini = report.get("minilm_projection")
    if mini:
        lines.append(
            f"- **MiniLM, measured apart:** {mini['cpu_ms_per_text']} ms of CPU per text, "
            f"{mini['texts_embedded_per_scored_item']} texts per scored item: "
            f"{mini['projected_cpu_ms_per_scored_item']} ms per item on top of the figures above "
            f"({mini['projected_minilm_cpu_s_at_smallest_size']} s at "
            f"{report['sizes'][0]['passages']:,} passages, whose LLM bound is "
            f"{mini['llm_bound_s_at_smallest_size']} s)."
        )
    splits = [
        f"{s['passages']:,}: {s['sentence_split']['one_passage_per_line']['cpu_s']} s"
        for s in report["sizes"]
    ]
    one_line = [
        f"{s['passages']:,}: {s['sentence_split']['one_line']['cpu_s']} s"
        for s in report["sizes"]
        if "one_line" in s["sentence_split"]
    ]
    lines.append(
        f"- **Sentence split** (once per document, inside the runs above): {', '.join(splits)}; "
        f"the same text as one line (pysbd, quadratic in a line's length): {', '.join(one_line)}."
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
