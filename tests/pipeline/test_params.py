"""params.yaml is generated from conf/ (conf/dvc_params.yaml), and hope-run and DVC agree on it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from hope.core.config_resolvers import as_overrides
from hope.pipeline import CONF_DIR, REPO_ROOT
from hope.pipeline.params import CONFIG_NAME, SECTIONS, compose_params, main, read_params

from .conftest import compose

EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
# The corpus profile each experiment reads (`labelled` is the sample experiment plus the whole
# labelled benchmark).
PROFILE = {"labelled": "sample"}


def test_committed_params_yaml_is_the_composition_of_conf():
    # Drift guard: edit conf/, then `make params` (python -m hope.pipeline.params).
    path = REPO_ROOT / "params.yaml"
    assert read_params(path) == compose_params(), "params.yaml is stale: run `make params`"
    assert path.read_text(encoding="utf-8").startswith("# GENERATED from conf/")


def test_the_sample_experiment_keeps_the_pipeline_parameters():
    params = compose_params()
    assert params["corpora"]["profile"] == "sample" and params["corpora"]["seed"] == 2025
    assert sum(params["corpora"]["counts"].values()) == 131  # Table 1, read by mirror and paper
    assert params["chunkers"] == ["fixed_500_o0", "semantic_minilm"]
    assert params["hope"] == {
        "profile": "paper",
        "seed": 0,
        "llm": "embedded",
        "embedder": "minilm",
        "cache": ".cache/hope/cache.sqlite",
        "parallel_pairs": 4,
        "overrides": [
            "hope.focus_passages=1",
            "hope.concept_unity.n_items=3",
            "hope.semantic_independence.n_questions=1",
            "hope.information_preservation.n_segments=2",
        ],
    }
    assert params["bleu"] == {"tokenize": "13a", "joiner": " "}
    assert params["rag"]["ragas"]["metrics"] == ["context_recall", "response_relevancy"]
    # The `rag` group composed in full, the sample experiment's keys over conf/rag/default.yaml.
    rag_default = yaml.safe_load((CONF_DIR / "rag" / "default.yaml").read_text(encoding="utf-8"))
    assert params["rag"]["questions"] == {
        **rag_default["questions"],
        "per_domain": {**rag_default["questions"]["per_domain"], "sample": 1},
    }
    assert params["rag"]["llm"]["judge"] == {
        "preset": "embedded",
        "overrides": {"n_threads": 1, "max_tokens": 1024},
    }
    for name in ("mirror", "paper"):  # the full setup: 8 chunkers, every RAGAS indicator
        full = compose_params([f"experiment={name}"])
        assert len(full["chunkers"]) == 8
        rag = {k: v for k, v in full["rag"].items() if k != "llm"}
        assert rag == {k: v for k, v in rag_default.items() if k != "llm"}


def sample_questions_sha256() -> str:
    import hashlib

    path = REPO_ROOT / "src" / "hope" / "labelled" / "sample" / "questions.jsonl"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_labelled_experiment_is_the_sample_plus_the_whole_labelled_benchmark():
    sample, whole = compose_params(), compose_params(["experiment=labelled"])
    assert {k: v for k, v in whole.items() if k != "labelled"} == {
        k: v for k, v in sample.items() if k != "labelled"
    }
    group = yaml.safe_load((CONF_DIR / "labelled" / "chroma.yaml").read_text(encoding="utf-8"))
    assert whole["labelled"] == group
    assert len(whole["labelled"]["corpora"]) == 4 and len(whole["labelled"]["chunkers"]) == 7
    # make repro's slice: one corpus, the three chunkers a tau needs, HOPE under paper only.
    # Its data ship with the package (nothing outside the repository), checked like the set's.
    assert sample["labelled"] == {
        **group,
        "source": "src/hope/labelled/sample",
        "checksums": {**group["checksums"], "questions.jsonl": sample_questions_sha256()},
        "corpora": ["chatlogs"],
        "chunkers": ["fixed_2000_o0", "fixed_500_o0", "recursive_500"],
        "profiles": ["paper"],
    }


def _write(params: dict, tmp_path: Path) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_experiment_composes_for_dvc_into_what_the_stages_read(name, tmp_path):
    from hope.corpora import DOMAINS
    from hope.corpora.corpus_config import load_params, resolve_source, target_count
    from hope.pipeline.score_step import score_config
    from hope.pipeline.stage_params import stage_params
    from hope.rag.rag_config import load_rag_config
    from hope.stages.bleu_stage import bleu_options, parse_args

    params = compose_params([f"experiment={name}"])
    assert tuple(params) == SECTIONS
    path = _write(params, tmp_path)

    corpora = load_params(path)  # download / prepare
    profile = PROFILE.get(name, name)
    assert corpora["profile"] == profile
    for domain in DOMAINS:
        assert resolve_source(corpora, domain).profile == profile
        assert target_count(corpora, domain) >= 1
    stages = stage_params(path, "chunkers", "hope", "labelled")
    for chunker in stages["chunkers"]:  # chunk
        assert (CONF_DIR / "chunker" / f"{chunker}.yaml").is_file()
    score_config(stages["hope"].score_overrides())  # hope: validates into a ScoreConfig
    assert bleu_options(parse_args(["--params", str(path)])) == ("13a", " ")  # bleu
    config, rag_profile = load_rag_config(path)  # questions, rag, ragas
    assert rag_profile == profile and config.questions.count_for(profile) >= 1
    settings = stages["labelled"].benchmark()  # labelled_data, labelled
    assert set(settings.corpora) <= {Path(k).stem for k in params["labelled"]["checksums"]}
    for chunker in settings.chunkers:
        assert (CONF_DIR / "chunker" / f"{chunker}.yaml").is_file()
    # paper_outputs interpolates these into its command line (dvc.yaml).
    assert set(params["analysis"]) >= {"seed", "bootstrap", "min_n", "bins", "min_bin_size"}


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_hope_run_and_the_dvc_params_agree_on_the_experiment(name):
    from hope.core.hope_settings import HopeSettings
    from hope.pipeline.config_schema import HopeStageParams
    from hope.pipeline.score_step import score_config

    run = compose([f"experiment={name}"])
    params = compose_params([f"experiment={name}"])

    assert params["chunkers"] == list(run.chunkers)
    corpora = params["corpora"]
    for key in ("profile", "seed", "min_chars", "mirror_path"):
        assert corpora[key] == run.corpus[key], key
    assert corpora["allow_shortfall"][run.corpus.profile] == run.corpus.allow_shortfall
    if run.corpus.profile != "sample":  # sample draws one document per domain, not `counts`
        assert corpora["counts"] == OmegaConf.to_container(run.corpus.counts)
    assert params["labelled"] == OmegaConf.to_container(run.labelled, resolve=True)
    assert params["bleu"] == {"tokenize": run.bleu.tokenize, "joiner": run.bleu.joiner}
    assert params["hope"]["parallel_pairs"] == run.scoring.parallel_pairs

    # The DVC hope stage's settings (profile + hope.overrides) are hope-run's HOPE settings.
    score = score_config(HopeStageParams(**params["hope"]).score_overrides())
    run_hope = HopeSettings.model_validate(OmegaConf.to_container(run.hope, resolve=True))
    assert score.hope == run_hope
    if name != "paper":  # paper: hope-run uses llm=vllm; DVC keeps hope.llm (-S hope.llm=vllm)
        assert score.llm == OmegaConf.to_container(run.llm, resolve=True)
        assert score.embedder == OmegaConf.to_container(run.embedder, resolve=True)


def test_an_edit_of_the_sample_experiment_reaches_hope_run_and_dvc(tmp_path):
    import shutil

    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from hope.pipeline.config_schema import HopeStageParams
    from hope.pipeline.score_step import score_config

    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    sample = conf / "experiment" / "sample.yaml"
    text = sample.read_text(encoding="utf-8")
    assert "    n_questions: 1\n" in text
    assert "chunkers: [fixed_500_o0, semantic_minilm]\n" in text
    sample.write_text(
        text.replace("    n_questions: 1\n", "    n_questions: 4\n").replace(
            "chunkers: [fixed_500_o0, semantic_minilm]\n", "chunkers: [fixed_500_o0]\n"
        ),
        encoding="utf-8",
    )

    params = compose_params(conf_dir=conf)
    assert "hope.semantic_independence.n_questions=4" in params["hope"]["overrides"]
    assert params["chunkers"] == ["fixed_500_o0"]
    score = score_config(HopeStageParams(**params["hope"]).score_overrides())
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        run = hydra_compose("config")
    assert score.hope.semantic_independence.n_questions == 4
    assert run.hope.semantic_independence.n_questions == 4
    assert list(run.chunkers) == ["fixed_500_o0"]


def test_dvc_hydra_composition_writes_the_same_sections(tmp_path):
    from configobj import ConfigObj

    hydra = ConfigObj(str(REPO_ROOT / ".dvc" / "config"))["hydra"]
    assert hydra.as_bool("enabled") and hydra["config_name"] == CONFIG_NAME
    config_dir = REPO_ROOT / hydra["config_dir"]
    assert config_dir.resolve() == CONF_DIR.resolve()

    cases = [[], ["experiment=mirror"], ["experiment=paper", "hope.seed=7"]]
    # What `dvc exp run -S ...` calls, in a fresh interpreter: `hope` (and with it the
    # ${hope.as_overrides:} resolver) is imported by Hydra through pkg://hope.conf alone.
    script = (
        "import json, sys\n"
        "from dvc.utils.hydra import compose_and_dump\n"
        "cases = json.loads(sys.argv[1])\n"
        "for i, overrides in enumerate(cases):\n"
        "    compose_and_dump(sys.argv[2] + f'/{i}.yaml', sys.argv[3], None, sys.argv[4],\n"
        "                     sys.argv[5], overrides)\n"
    )
    subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            json.dumps(cases),
            str(tmp_path),
            str(config_dir),
            CONFIG_NAME,
            str(REPO_ROOT),
        ],
        check=True,
        cwd=tmp_path,
        capture_output=True,
    )
    for i, overrides in enumerate(cases):
        dumped = read_params(tmp_path / f"{i}.yaml")
        # DVC also writes `experiment`, the node the sections are computed from; no stage reads it.
        assert set(dumped) == {*SECTIONS, "experiment"}
        assert {k: dumped[k] for k in SECTIONS} == compose_params(overrides), overrides


def test_main_writes_and_checks(tmp_path, capsys):
    out = tmp_path / "params.yaml"
    assert main(["--output", str(out), "experiment=mirror"]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# GENERATED") and "experiment=mirror" in text.splitlines()[0]
    assert read_params(out) == compose_params(["experiment=mirror"])
    assert main(["--check", "--output", str(out), "experiment=mirror"]) == 0
    assert main(["--check", "--output", str(out)]) == 1  # the default is the sample experiment
    assert main(["--output", str(out), "no_such_key=1"]) == 2
    assert "configuration error" in capsys.readouterr().err


@pytest.mark.parametrize(
    "node",
    [
        {"focus_passages": None, "concept_unity": {"n_items": 3, "critic": True}},
        {"choice_retry_temperatures": [0.1, 0.2], "method": "qa_centroid", "prompts_dir": "a b"},
        {"language": "true", "clip": "negative_to_zero", "x": "13a", "y": "it's", "z": 1.5e-3},
    ],
)
def test_as_overrides_round_trips_through_hydras_parser(node):
    overrides = as_overrides(node)
    parsed = OverridesParser.create().parse_overrides(overrides)
    flat = {o.key_or_group: o.value() for o in parsed}
    expected = {}

    def walk(prefix, value):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}", v)
        else:
            expected[prefix] = value

    walk("hope", node)
    assert flat == expected
    assert as_overrides(None) == []


@pytest.mark.parametrize("name", sorted(p.stem for p in (CONF_DIR / "rag_llm").glob("*.yaml")))
def test_every_rag_llm_choice_reaches_the_rag_stages(name, monkeypatch):
    from hope.rag.rag_config import RagConfig, model_endpoint, resolve_llm_config

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    rag = compose_params([f"rag_llm@experiment.rag.llm={name}"])["rag"]
    config = RagConfig.model_validate(rag)
    for role in ("questions", "answer", "judge"):
        assert getattr(config.llm, role).preset == name
        endpoint = model_endpoint(resolve_llm_config(getattr(config.llm, role)), role)
        assert endpoint.identity.startswith("embedded:" if name == "embedded" else "openai:")
