from __future__ import annotations

import copy
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hope.corpora import DOMAINS
from hope.corpora.corpus_config import load_params
from hope.pipeline.download_step import run_download


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass

    def do_GET(self):
        # A response that promises more bytes than it sends, then hangs up: an interrupted download.
        if self.path.startswith("/__truncated__"):
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"only the first few bytes")
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()


def serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="session")
def mirror_url(corpora_dir: Path) -> Iterator[str]:
    """The offline mirror served over HTTP on 127.0.0.1: the online code path, offline."""
    server, url = serve(corpora_dir)
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def params_cfg(repo_root: Path) -> dict:
    return load_params(repo_root / "params.yaml")


@pytest.fixture
def mirror_cfg(params_cfg: dict, corpora_dir: Path) -> dict:
    cfg = copy.deepcopy(params_cfg)
    cfg["profile"] = "mirror"
    cfg["mirror_path"] = str(corpora_dir)
    return cfg


@pytest.fixture
def sample_cfg(params_cfg: dict) -> dict:
    cfg = copy.deepcopy(params_cfg)
    cfg["profile"] = "sample"
    return cfg


@pytest.fixture(scope="session")
def mirror_raw(params_cfg: dict, corpora_dir: Path, tmp_path_factory) -> Path:
    """Every corpus of the mirror downloaded once (local-path mode) for the session."""
    cfg = copy.deepcopy(params_cfg)
    cfg["profile"] = "mirror"
    cfg["mirror_path"] = str(corpora_dir)
    root = tmp_path_factory.mktemp("mirror_raw")
    for domain in DOMAINS:
        run_download(cfg, domain, root / domain)
    return root
