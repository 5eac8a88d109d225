import multiprocessing as mp

from hope.core.response_cache import ResponseCache, content_key


def _writer(path, worker, n):
    cache = ResponseCache(path)
    for i in range(n):
        cache.put_json("chat", f"{worker}-{i}", {"worker": worker, "i": i})
        assert cache.get_json("chat", f"{worker}-{i}") == {"worker": worker, "i": i}
    cache.close()


def test_content_key_is_canonical():
    assert content_key({"a": 1, "b": [1, 2]}) == content_key({"b": [1, 2], "a": 1})
    assert content_key({"a": 1}) != content_key({"a": 2})


def test_several_processes_write_one_cache_at_once(tmp_path):
    path = tmp_path / "shared.sqlite"
    ctx = mp.get_context("spawn")
    workers = [ctx.Process(target=_writer, args=(str(path), w, 50)) for w in range(4)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(60)
        assert p.exitcode == 0
    cache = ResponseCache(path)
    assert cache.count("chat") == 200
    assert cache.get_json("chat", "3-49") == {"worker": 3, "i": 49}


def test_in_memory_cache_and_stats():
    cache = ResponseCache(None)
    assert cache.get("x", "k") is None
    cache.put("x", "k", b"v")
    assert cache.get("x", "k") == b"v"
    assert (cache.hits, cache.misses, cache.writes) == (1, 1, 1)
