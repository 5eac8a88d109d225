"""What CPU-independent numerics cost, and whether they hold: bench/results/cpu_independence.json.

Every sentence of the packaged sample corpora (src/hope/corpora/sample) is embedded with MiniLM
in subprocesses that run as different x86 CPUs would (the same library switches as
tests/pipeline/test_repro_clones.py: torch's kernel capability, MKL's instruction set, OpenBLAS's
core type, numpy's SIMD dispatch, thread counts). For each, the record keeps:

* the float32 forward pass (the old numerics) and the float64 forward pass: whether their bytes
  equal the native run's, and the largest difference relative to a row's peak;
* the float64 pass snapped to the grid (what ``hope.models.embeddings`` returns now) and the exact
  grid cosine matrix of those vectors: whether their bytes equal the native run's;
* the time of each pass (median and spread of repeated runs) and of the cosine matrix, exact
  grid against a plain float64 matrix product.

Run: ``make bench-cpu-independence`` (a few minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import harness
from harness import MIN_RUNS, REPO, spread
from hope.testing import OTHER_CPU_ENV

OUT = REPO / "bench" / "results" / "cpu_independence.json"
SAMPLE = REPO / "src" / "hope" / "corpora" / "sample"
CONFIGS = {
    "native": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "x86-64-v2, one thread": OTHER_CPU_ENV,
}


def sample_sentences(limit: int) -> list[str]:
    texts: list[str] = []
    for path in sorted(SAMPLE.glob("*.txt")):
        for piece in re.split(r"(?<=[.!?])\s+", path.read_text(encoding="utf-8")):
            if len(piece.split()) >= 5:
                texts.append(piece.strip())
    return texts[:limit]


def worker(texts_file: Path, out_dir: Path, repeats: int) -> None:
    """One CPU configuration: the vectors and timings, written to ``out_dir``."""
    import torch
    from sentence_transformers import SentenceTransformer

    from hope.core.metrics.similarity import cosine_matrix
    from hope.models.embeddings import SentenceTransformerEmbedder
    from hope.models.model_files import minilm_path

    texts = json.loads(texts_file.read_text())
    raw32 = SentenceTransformer(str(minilm_path()), device="cpu")
    raw64 = SentenceTransformer(str(minilm_path()), device="cpu").to(torch.float64)

    def encode(model):
        return np.stack(
            [model.encode([t], convert_to_numpy=True, normalize_embeddings=True)[0] for t in texts]
        )

    timings: dict[str, list[float]] = {"float32": [], "float64": [], "float64_grid": []}
    vectors: dict[str, np.ndarray] = {}
    embedder = SentenceTransformerEmbedder("minilm")
    for _ in range(repeats):
        for name, run in (
            ("float32", lambda: encode(raw32)),
            ("float64", lambda: encode(raw64)),
            ("float64_grid", lambda: embedder.embed(texts)),
        ):
            started = time.perf_counter()
            vectors[name] = run()
            timings[name].append(time.perf_counter() - started)
    grid = vectors["float64_grid"]
    cosine_s: dict[str, list[float]] = {"exact_grid": [], "plain_float64": []}
    for _ in range(repeats):
        started = time.perf_counter()
        exact = cosine_matrix(grid, grid)
        cosine_s["exact_grid"].append(time.perf_counter() - started)
        started = time.perf_counter()
        plain = grid.astype(np.float64) @ grid.astype(np.float64).T
        cosine_s["plain_float64"].append(time.perf_counter() - started)
    for name, matrix in {**vectors, "cosine_exact": exact, "cosine_plain": plain}.items():
        np.save(out_dir / f"{name}.npy", matrix)
    (out_dir / "timings.json").write_text(
        json.dumps({"embed_s": timings, "cosine_s": cosine_s, "threads": torch.get_num_threads()})
    )


def digest(matrix: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(matrix).tobytes()).hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=MIN_RUNS)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(Path(args.worker[0]), Path(args.worker[1]), args.repeats)
        return 0

    bench_run = harness.start()
    texts = sample_sentences(args.texts)
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts))
        for name, env in CONFIGS.items():
            out = Path(tmp) / re.sub(r"\W+", "_", name)
            out.mkdir()
            command = [sys.executable, __file__, "--repeats", str(args.repeats)]
            subprocess.run(
                [*command, "--worker", str(texts_file), str(out)],
                check=True,
                env={**os.environ, "HF_HUB_OFFLINE": "1", **env},
            )
            results[name] = {
                "env": env,
                "arrays": {p.stem: np.load(p) for p in sorted(out.glob("*.npy"))},
                "timings": json.loads((out / "timings.json").read_text()),
            }
    native = results["native"]["arrays"]
    configs = []
    for name, result in results.items():
        arrays = result["arrays"]
        row = {"config": name, "env": result["env"], "threads": result["timings"]["threads"]}
        for array_name, matrix in arrays.items():
            base = native[array_name]
            peak = np.abs(base).max(axis=1, keepdims=True)
            row[array_name] = {
                "sha256_16": digest(matrix),
                "bytes_equal_native": bool(np.array_equal(matrix, base)),
                "max_diff_over_row_peak": float((np.abs(matrix - base) / peak).max()),
            }
        timings = result["timings"]
        row["embed_s"] = {k: spread(v) for k, v in timings["embed_s"].items()}
        row["cosine_s"] = {k: spread(v) for k, v in timings["cosine_s"].items()}
        configs.append(row)
    hold = all(
        row[name]["bytes_equal_native"]
        for row in configs
        for name in ("float64_grid", "cosine_exact")
    )
    native_row = configs[0]
    record = {
        "texts": len(texts),
        "repeats": args.repeats,
        "configs": configs,
        "summary": {
            "grid_vectors_and_cosines_equal_in_every_config": hold,
            "float32_equal_in_every_config": all(
                row["float32"]["bytes_equal_native"] for row in configs
            ),
            "float64_cost_over_float32_native": round(
                native_row["embed_s"]["float64_grid"]["median"]
                / native_row["embed_s"]["float32"]["median"],
                3,
            ),
            "largest_float64_noise_over_row_peak": max(
                row["float64"]["max_diff_over_row_peak"] for row in configs
            ),
        },
    }
    bench_run.write_record(OUT, record)
    print(json.dumps(record["summary"], indent=2))
    return 0 if hold else 1


if __name__ == "__main__":
    sys.exit(main())
