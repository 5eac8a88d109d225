"""Table 1 from prepared data; consistency of params.yaml, conf/corpus, dvc.yaml and samples."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from hope.corpora import DOMAINS, PAPER_COUNTS
from hope.corpora.corpus_config import sample_dir, sample_index
from hope.corpora.document_schema import SchemaError, make_document
from hope.pipeline import table1_step as table1_work
from hope.stages import table1_stage as table1


def _doc(domain: str, n: int, i: int = 0) -> dict:
    text = (f"Document {i} of {domain}. " + "x" * n)[:n]
    return make_document(
        doc_id=f"{domain}-{i}", domain=domain, title="t", text=text, source="", url="", license=""
    ).to_dict()


def test_table1_counts_and_lengths(tmp_path: Path):
    records = [_doc("news", 1000, 0), _doc("news", 2000, 1), _doc("news", 4000, 2)]
    records += [_doc("wiki", 3000, 0), _doc("wiki", 5000, 1)]
    manifest = {"profile": "mirror", "domains": {"news": {"source_label": "BBC"}}}
    rows = {r["domain"]: r for r in table1_work.build_table1(records, manifest)}
    assert rows["news"]["documents"] == 3 and rows["news"]["source"] == "BBC"
    assert rows["news"]["mean_chars"] == pytest.approx(2333.3)
    assert rows["news"]["median_chars"] == 2000
    assert rows["wiki"]["median_chars"] == 4000
    assert rows["arxiv"]["documents"] == 0 and rows["arxiv"]["mean_chars"] is None
    assert rows["total"]["documents"] == 5 and rows["total"]["paper_documents"] == 131
    md = table1_work.to_markdown(list(rows.values()), "mirror")
    assert "| Newspapers | 3 | 20 | BBC | 2,333.3 | 2,000 |" in md
    assert "| Academic articles | 0 | 12 |  | – | – |" in md
    csv_text = table1_work.to_csv(list(rows.values()))
    assert csv_text.splitlines()[0] == ",".join(table1_work.COLUMNS)
    assert "news,Newspapers,3,20,BBC,2333.3,2000" in csv_text


def test_table1_main_writes_outputs_and_rejects_bad_records(tmp_path: Path, capsys):
    (tmp_path / "manifest.json").write_text(json.dumps({"profile": "sample", "domains": {}}))
    good = _doc("tos", 1500)
    (tmp_path / "documents.jsonl").write_text(json.dumps(good) + "\n")
    assert table1.main(["--prepared", str(tmp_path)]) == 0
    assert "| Terms of service | 1 | 10 |" in (tmp_path / "table1.md").read_text()
    assert (tmp_path / "table1.csv").read_text().count("\n") == len(DOMAINS) + 2
    (tmp_path / "documents.jsonl").write_text(json.dumps({**good, "n_chars": 1}) + "\n")
    assert table1.main(["--prepared", str(tmp_path)]) == 1
    assert "n_chars" in capsys.readouterr().err
    with pytest.raises(SchemaError):
        table1_work.build_table1([{**good, "sha256": "0" * 64}], {})


def test_sample_documents_are_package_data_with_pinned_checksums():
    entries = sample_index()["documents"]
    assert [e["domain"] for e in entries] == list(DOMAINS)
    for entry in entries:
        data = (sample_dir() / entry["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["file"]
        assert 1500 <= len(data.decode("utf-8")) <= 4000, entry["file"]


def test_params_counts_are_the_papers(repo_root: Path):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())["corpora"]
    assert params["counts"] == PAPER_COUNTS and sum(params["counts"].values()) == 131
    assert params["profile"] == "sample"
    assert params["sources"]["debates"]["subset"] in ("undebates", "euro_parl")


@pytest.mark.parametrize("profile", ["sample", "mirror", "paper"])
def test_hydra_corpus_group_matches_params(repo_root: Path, profile: str):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    params = yaml.safe_load((repo_root / "params.yaml").read_text())["corpora"]
    # The corpus group as hope-run composes it (conf/corpus/<profile>.yaml includes
    # conf/corpora/base.yaml for the seed, min_chars and allow_shortfall).
    with initialize_config_dir(config_dir=str(repo_root / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[f"corpus={profile}"])
    conf = OmegaConf.to_container(cfg.corpus, resolve=True)
    assert conf["profile"] == profile
    assert conf["seed"] == params["seed"] and conf["min_chars"] == params["min_chars"]
    assert conf["allow_shortfall"] == params["allow_shortfall"][profile]
    if profile == "sample":
        assert conf["counts"] == dict.fromkeys(DOMAINS, 1)
        return
    assert conf["counts"] == params["counts"]
    for domain in DOMAINS:
        src, mine = params["sources"][domain], conf["sources"][domain]
        if profile == "mirror":
            assert mine["base"] == src["mirror_dir"]
            fmt = {k: v for k, v in src.items() if isinstance(v, str)}
            assert mine["files"] == [f.format(**fmt) for f in src["mirror_files"]]
        else:
            base = (src["base_url"] or "").format(revision=src.get("revision"))
            assert mine.get("base", "") == base
            fmt = {k: v for k, v in src.items() if isinstance(v, str)}
            assert mine["files"] == [f.format(**fmt) for f in src["files"]]


def test_dvc_pipeline_declares_key_level_params(repo_root: Path):
    dvc = yaml.safe_load((repo_root / "dvc.yaml").read_text())
    stages = dvc["stages"]
    assert stages["download"]["foreach"] == list(DOMAINS)
    assert "corpora.sources.${item}" in stages["download"]["do"]["params"]
    assert {"corpora.seed", "corpora.counts", "corpora.profile"} <= set(stages["prepare"]["params"])
    assert {f"data/raw/{d}" for d in DOMAINS} <= set(stages["prepare"]["deps"])
    assert stages["prepare"]["outs"] == [
        "data/prepared/documents.jsonl",
        "data/prepared/manifest.json",
    ]
    assert stages["table1"]["outs"] == ["data/prepared/table1.csv", "data/prepared/table1.md"]
