"""Does a sentence-transformers embedding depend on the other texts of its batch (CPU)?

sentence-transformers pads every text of a batch to the batch's longest one (after sorting by
length), so the same text meets other tensor shapes in other batches. The embedder
(``hope.models.embeddings.SentenceTransformerEmbedder``) runs the model in float64, embeds each
text in a batch of its own and snaps the unit rows to a grid (``cpu_independent_rows``). This
measures, on the packaged all-MiniLM-L6-v2, for two sets of texts (``sample``: sentences and
three-sentence passages of the sample corpus; ``passages``: seeded windows of 500 and 2,000
characters of a labelled-set corpus, the sizes the chunkers make):
  batch_dependence  the largest element-wise difference between a text's float64 vector embedded
                    in two different batch compositions (batch size 32 vs shuffled batch 8, and
                    batch 32 vs alone), and how many rows differ at all;
  batched_on_grid   whether snapping the padded batch's rows to the embedder's grid gives the
                    embedder's bits (batch 32 and shuffled batch 8 against alone): if it did for
                    every text, batching would be a free speed-up of the same vectors;
  alone             the embedder's vectors in other orders: they must be bit-identical;
  cost_s            wall time of embedding all texts in float64 batches of 32 vs one at a time
                    (median and spread), and their ratio.
Writes bench/results/embedding_batches.json.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from pathlib import Path

import numpy as np

import harness
from harness import REPO, check_runs, spread
from hope.models.embeddings import SentenceTransformerEmbedder, cpu_independent_rows

SAMPLE = REPO / "src" / "hope" / "corpora" / "sample"
PASSAGE_CORPUS = REPO.parent / "shared/benchmarks/chroma-general-eval/corpora/wikitexts.md"
PASSAGE_SIZES = (500, 2000)


def texts(limit: int) -> list[str]:
    """Sentences and three-sentence passages of the sample corpus: many different lengths."""
    out: list[str] = []
    for path in sorted(SAMPLE.glob("*.txt")):
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", path.read_text()) if len(s) > 20]
        out.extend(sentences)
        out.extend(" ".join(sentences[i : i + 3]) for i in range(0, len(sentences), 3))
    return list(dict.fromkeys(out))[:limit]


def passages(path: Path, per_size: int, seed: int = 0) -> list[str]:
    """``per_size`` seeded windows of each of ``PASSAGE_SIZES`` characters of ``path``."""
    text = path.read_text(encoding="utf-8")
    rng = random.Random(seed)
    out = []
    for size in PASSAGE_SIZES:
        if len(text) <= size:
            raise SystemExit(f"{path} has {len(text)} characters, fewer than a {size} window")
        for _ in range(per_size):
            begin = rng.randrange(0, len(text) - size)
            out.append(text[begin : begin + size])
    return out


def batched(model, items: list[str], batch_size: int) -> np.ndarray:
    return model.encode(
        items,
        batch_size=batch_size,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    )


def compare(a: np.ndarray, b: np.ndarray) -> dict:
    diff = np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))
    rows_differ = int((diff.max(axis=1) > 0).sum())
    return {
        "max_abs_diff": float(diff.max()),
        "rows_differing": rows_differ,
        "rows": len(a),
    }


def measure(embedder: SentenceTransformerEmbedder, items: list[str], runs: int) -> dict:
    """Batch dependence, the batched rows on the grid, the embedder's order independence and the
    cost, for one set of texts."""
    order = list(range(len(items)))
    random.Random(0).shuffle(order)
    shuffled = [items[i] for i in order]
    back = np.argsort(order)

    model = embedder.load_model()
    big = batched(model, items, 32)
    small = batched(model, shuffled, 8)[back]
    raw_alone = np.stack([batched(model, [text], 1)[0] for text in items])
    alone_a = embedder.embed(items)
    alone_b = embedder.embed(shuffled)[back]
    # Each text alone once more, in reverse: nothing else may change its vector.
    alone_c = embedder.embed(items[::-1])[::-1]
    on_grid = {
        "batch32_vs_alone": compare(cpu_independent_rows(big), alone_a),
        "shuffled_batch8_vs_alone": compare(cpu_independent_rows(small), alone_a),
    }
    on_grid["bit_identical"] = all(v["rows_differing"] == 0 for v in on_grid.values())

    batched_s, alone_s = [], []
    for _ in range(runs):
        started = time.perf_counter()
        cpu_independent_rows(batched(model, items, 32))
        batched_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        embedder.embed(items)
        alone_s.append(time.perf_counter() - started)
    cost = {"batched_32": spread(batched_s), "alone": spread(alone_s)}
    cost["alone_over_batched_median"] = round(
        cost["alone"]["median"] / cost["batched_32"]["median"], 2
    )
    return {
        "texts": len(items),
        "chars": {"min": min(map(len, items)), "max": max(map(len, items))},
        "batch_dependence": {
            "batch32_vs_shuffled_batch8": compare(big, small),
            "batch32_vs_alone": compare(big, raw_alone),
        },
        "batched_on_grid": on_grid,
        "alone": {
            "shuffled_vs_in_order": compare(alone_a, alone_b),
            "reversed_vs_in_order": compare(alone_a, alone_c),
            "bit_identical": bool(
                np.array_equal(alone_a, alone_b) and np.array_equal(alone_a, alone_c)
            ),
        },
        "cost_s": cost,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=96, help="sample-corpus texts")
    parser.add_argument(
        "--passages-from", type=Path, default=PASSAGE_CORPUS, help="corpus of the passage windows"
    )
    parser.add_argument("--passages", type=int, default=40, help="windows per size")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--output", default=str(REPO / "bench/results/embedding_batches.json"))
    args = parser.parse_args()
    check_runs(args.runs)
    if not args.passages_from.is_file():
        raise SystemExit(f"--passages-from {args.passages_from}: no such file")
    # The code measured: before the runs, so a later edit cannot relabel it.
    bench_run = harness.start()

    embedder = SentenceTransformerEmbedder("minilm")
    sets = {
        "sample": texts(args.texts),
        "passages": passages(args.passages_from, args.passages),
    }
    report = {
        "benchmark": "embedding_batches",
        "model": embedder.identity,
        "passages_from": args.passages_from.name,
        "passage_sizes": list(PASSAGE_SIZES),
        "sets": {name: measure(embedder, items, args.runs) for name, items in sets.items()},
    }
    report = bench_run.write_record(args.output, report)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
