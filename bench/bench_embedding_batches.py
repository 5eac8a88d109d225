"""Does a sentence-transformers embedding depend on the other texts of its batch (CPU)?

sentence-transformers pads every text of a batch to the batch's longest one (after sorting by
length), so the same text meets other tensor shapes in other batches. This measures, on the
packaged all-MiniLM-L6-v2 and the sample corpus's sentences and passages:
  batch_dependence  the largest element-wise difference between a text's vector embedded in
                    two different batch compositions (mixed lengths, batch size 32 vs 8 and
                    shuffled), and whether any vector differs at all;
  alone             the same for hope.models.embeddings.SentenceTransformerEmbedder, which
                    embeds every text in a batch of its own (no padding, no neighbours): the
                    vectors must be bit-identical across compositions and orders;
  cost              wall time of embedding all texts batched vs alone (median and spread).
Writes bench/results/embedding_batches.json.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time

import numpy as np

import harness
from harness import REPO, check_runs, spread
from hope.models.embeddings import SentenceTransformerEmbedder

SAMPLE = REPO / "src" / "hope" / "corpora" / "sample"


def texts(limit: int) -> list[str]:
    """Sentences and three-sentence passages of the sample corpus: many different lengths."""
    out: list[str] = []
    for path in sorted(SAMPLE.glob("*.txt")):
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", path.read_text()) if len(s) > 20]
        out.extend(sentences)
        out.extend(" ".join(sentences[i : i + 3]) for i in range(0, len(sentences), 3))
    return list(dict.fromkeys(out))[:limit]


def batched(model, items: list[str], batch_size: int) -> np.ndarray:
    return model.encode(
        items,
        batch_size=batch_size,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    )


def compare(a: np.ndarray, b: np.ndarray) -> dict:
    diff = np.abs(a - b)
    rows_differ = int((diff.max(axis=1) > 0).sum())
    return {
        "max_abs_diff": float(diff.max()),
        "rows_differing": rows_differ,
        "rows": len(a),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=96)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--output", default=str(REPO / "bench/results/embedding_batches.json"))
    args = parser.parse_args()
    check_runs(args.runs)
    # The code measured: before the runs, so a later edit cannot relabel it.
    bench_run = harness.start()

    items = texts(args.texts)
    order = list(range(len(items)))
    random.Random(0).shuffle(order)
    shuffled = [items[i] for i in order]
    back = np.argsort(order)

    embedder = SentenceTransformerEmbedder("minilm")
    model = embedder.load_model()
    big = batched(model, items, 32)
    small = batched(model, shuffled, 8)[back]
    alone_a = embedder.embed(items)
    alone_b = embedder.embed(shuffled)[back]
    # Each text alone once more, in reverse: nothing else may change its vector.
    alone_c = embedder.embed(items[::-1])[::-1]

    batched_s, alone_s = [], []
    for _ in range(args.runs):
        started = time.perf_counter()
        batched(model, items, 32)
        batched_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        embedder.embed(items)
        alone_s.append(time.perf_counter() - started)
    report = {
        "benchmark": "embedding_batches",
        "model": embedder.identity,
        "texts": len(items),
        "chars": {"min": min(map(len, items)), "max": max(map(len, items))},
        "batch_dependence": {
            "batch32_vs_shuffled_batch8": compare(big, small),
            "batch32_vs_alone": compare(big, alone_a),
        },
        "alone": {
            "shuffled_vs_in_order": compare(alone_a, alone_b),
            "reversed_vs_in_order": compare(alone_a, alone_c),
            "bit_identical": bool(
                np.array_equal(alone_a, alone_b) and np.array_equal(alone_a, alone_c)
            ),
        },
        "cost_s": {"batched_32": spread(batched_s), "alone": spread(alone_s)},
    }
    report["cost_s"]["alone_over_batched_median"] = round(
        report["cost_s"]["alone"]["median"] / report["cost_s"]["batched_32"]["median"], 2
    )
    report = bench_run.write_record(args.output, report)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
