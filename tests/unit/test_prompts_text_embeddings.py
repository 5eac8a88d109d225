from importlib import resources

import numpy as np
import pytest

from hope.core.metrics.information_preservation import sample_segments
from hope.core.prompting import load_prompt
from hope.core.prompts import response_schemas as schemas
from hope.core.response_cache import ResponseCache
from hope.core.text import split_sentences
from hope.models.embeddings import CachingEmbedder, HashingEmbedder

PROMPTS = sorted(
    p.name.removesuffix(".yaml")
    for p in resources.files("hope.core.prompts").iterdir()
    if p.name.endswith(".yaml")
)


@pytest.mark.parametrize("name", PROMPTS)
def test_every_prompt_is_versioned_and_renders(name):
    prompt = load_prompt(name)
    assert prompt.name == name and prompt.version >= 1
    values = {field: f"<{field}>" for field in prompt.fields}
    messages = prompt.render(**values)
    assert [m["role"] for m in messages] == ["system", "user"]
    for field in prompt.fields:
        assert f"<{field}>" in messages[1]["content"]


def test_prompt_identity_changes_with_its_text(tmp_path):
    original = load_prompt("concept_statements")
    edited = tmp_path / "concept_statements.yaml"
    edited.write_text(
        resources.files("hope.core.prompts")
        .joinpath("concept_statements.yaml")
        .read_text()
        .replace("different statements", "varied statements")
    )
    changed = load_prompt("concept_statements", str(tmp_path))
    assert changed.version == original.version and changed.id != original.id


def test_rendering_needs_every_field():
    with pytest.raises(KeyError, match="passage"):
        load_prompt("concept_statements").render(n=3)


def test_schemas_fix_the_number_of_items():
    model = schemas.statements_model(3)
    schema = model.model_json_schema()["properties"]["statements"]
    assert schema["minItems"] == schema["maxItems"] == 3
    with pytest.raises(ValueError):
        model.model_validate({"statements": ["a", "b"]})
    with pytest.raises(ValueError):
        schemas.ChoiceResponse.model_validate({"choice": "E"})


def test_sentences_keep_offsets():
    text = "Dr. Smith arrived at 3 p.m. on Jan. 5. It rained.\n\nThe end."
    sentences = split_sentences(text)
    assert [s.text for s in sentences] == [
        "Dr. Smith arrived at 3 p.m. on Jan. 5.",
        "It rained.",
        "The end.",
    ]
    for s in sentences:
        assert text[s.start : s.end] == s.text


def test_segment_sampling_is_seeded_uniform_and_without_replacement():
    text = " ".join(f"Sentence number {i} ends here." for i in range(30))
    a = sample_segments(text, n_segments=5, sentences_per_segment=3, replace=False, seed=1)
    b = sample_segments(text, n_segments=5, sentences_per_segment=3, replace=False, seed=1)
    c = sample_segments(text, n_segments=5, sentences_per_segment=3, replace=False, seed=2)
    assert a == b and a != c
    assert len({s.first_sentence for s in a}) == 5
    assert all(s.n_sentences == 3 and text[s.start : s.end] == s.text for s in a)
    everything = sample_segments(
        text, n_segments=100, sentences_per_segment=3, replace=False, seed=1
    )
    assert len(everything) == 28  # every window once
    with_replacement = sample_segments(
        text, n_segments=100, sentences_per_segment=3, replace=True, seed=1
    )
    assert len(with_replacement) == 100


def test_caching_embedder_embeds_each_text_once_and_persists(tmp_path):
    inner = HashingEmbedder(64)
    calls = []
    original = inner.embed
    inner.embed = lambda texts: calls.append(list(texts)) or original(texts)
    cache = ResponseCache(tmp_path / "e.sqlite")
    embedder = CachingEmbedder(inner, cache)
    first = embedder.embed(["a b", "c d", "a b"])
    assert calls == [["a b", "c d"]]
    np.testing.assert_allclose(first[0], first[2])
    embedder.embed(["c d"])
    assert len(calls) == 1
    fresh = CachingEmbedder(inner, ResponseCache(tmp_path / "e.sqlite"))
    np.testing.assert_allclose(fresh.embed(["a b"])[0], first[0])
    assert len(calls) == 1 and fresh.cache_hits == 1


def test_hashing_embedder_is_lexical_and_normalised():
    vectors = HashingEmbedder(256).embed(["red apple pie", "red apple pie", "quantum tunnelling"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[0] @ vectors[1] == pytest.approx(1.0)
    assert abs(vectors[0] @ vectors[2]) < 0.5


def test_caching_embedder_memo_is_bounded_and_evicted_vectors_come_from_the_cache():
    import numpy as np

    from hope.core.response_cache import ResponseCache
    from hope.models.embeddings import CachingEmbedder, HashingEmbedder

    texts = [f"text number {i} about harbours" for i in range(10)]
    embedder = CachingEmbedder(HashingEmbedder(), ResponseCache(None), memo_size=3)
    first = embedder.embed(texts)  # more texts in one call than the memo holds
    assert len(embedder._memo) == 3 and embedder.texts_computed == 10
    again = embedder.embed(texts)
    assert np.array_equal(first, again)
    assert embedder.texts_computed == 10  # evicted vectors were read back, not recomputed
    assert embedder.cache_hits >= 7
    assert np.array_equal(embedder.lookup(texts[:2]), first[:2])
    unbounded = CachingEmbedder(HashingEmbedder(), None, memo_size=3)  # no cache: keep all
    unbounded.embed(texts)
    assert len(unbounded._memo) == 10
