"""Real documents from the shared corpora mirror, read with each source's own format."""

from __future__ import annotations

import gzip
import json
import lzma
from pathlib import Path

import pytest


def _wiki(corpora_dir: Path, titles: set[str]) -> dict[str, str]:
    import pyarrow.parquet as pq

    rows = pq.read_table(corpora_dir / "wiki/20231101.en/train-00000-of-00001.parquet").to_pylist()
    found = {f"wiki:{r['id']}": r["text"] for r in rows if r["title"] in titles}
    assert len(found) == len(titles), f"wiki titles missing from the mirror: {titles}"
    return found


def _cord19(corpora_dir: Path, relative: str) -> str:
    parse = json.loads((corpora_dir / "cord19/document_parses" / relative).read_text("utf-8"))
    return "\n\n".join(paragraph["text"] for paragraph in parse["body_text"])


def _pile_of_law(corpora_dir: Path, subset: str, url_suffix: str) -> str:
    with lzma.open(corpora_dir / f"pile_of_law/data/train.{subset}.jsonl.xz", "rt") as handle:
        for line in handle:
            record = json.loads(line)
            if record["url"].endswith(url_suffix):
                return record["text"]
    raise AssertionError(f"no {subset} record ending in {url_suffix}")


def _arxiv_first(corpora_dir: Path) -> tuple[str, str]:
    with gzip.open(corpora_dir / "arxiv/arXiv_src_2212_086.jsonl.gz", "rt") as handle:
        paper = json.loads(handle.readline())
    return paper["paper_id"], "\n\n".join(p["text"] for p in paper["body_text"])


def _news_under(corpora_dir: Path, limit: int) -> str:
    """The longest news article below ``limit`` characters: several paragraphs, quick to embed."""
    import pyarrow.parquet as pq

    texts = pq.read_table(corpora_dir / "news/plain_text/train-00000-of-00001.parquet")
    return max((t for t in texts.column("text").to_pylist() if t and len(t) < limit), key=len)


@pytest.fixture(scope="session")
def real_documents(corpora_dir: Path) -> dict[str, str]:
    """Two Wikipedia articles, a CORD-19 body, terms of service, a UN speech, arXiv, news."""
    docs = _wiki(corpora_dir, {"Amazon rainforest", "Southern California"})
    docs["cord19:0a3d78fb"] = _cord19(
        corpora_dir, "pdf_json/0a3d78fb4b228cdc20e48fcc96f9da3f92ce1207.json"
    )
    docs["tos:Mozilla"] = _pile_of_law(corpora_dir, "tos", "/Mozilla.txt")
    docs["undebates:ZAF_2000"] = _pile_of_law(corpora_dir, "undebates", "ZAF_55_2000.txt")
    paper_id, paper_text = _arxiv_first(corpora_dir)
    docs[f"arxiv:{paper_id}"] = paper_text
    docs["news:short"] = _news_under(corpora_dir, 3000)
    assert all(text.strip() for text in docs.values())
    return docs


@pytest.fixture(scope="session")
def semantic_documents(real_documents: dict[str, str]) -> dict[str, str]:
    """Two short real documents, so the embedding models stay within the suite's time budget."""
    return {k: real_documents[k] for k in ("cord19:0a3d78fb", "news:short")}


@pytest.fixture(scope="session")
def conf_dir(repo_root: Path) -> Path:
    return repo_root / "conf" / "chunker"
