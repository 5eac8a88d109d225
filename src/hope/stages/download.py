"""DVC stage ``download@<domain>``: fetch one corpus's raw files into ``data/raw/<domain>``.

The stage writes into a staging folder and swaps it into place only when every file has been
fetched and verified, so a failure never leaves a half-filled output folder behind.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

from hope.corpora import DOMAINS, get_adapter
from hope.corpora.base import DOWNLOAD_MANIFEST, CorpusError
from hope.corpora.config import load_params, resolve_source
from hope.corpora.fetch import FetchError
from hope.io import write_json_atomic
from hope.stage_runner import StageOutput, run_stage, stage_parser

log = logging.getLogger("hope.stages.download")


def run_download(cfg: dict[str, Any], domain: str, out_dir: str | os.PathLike[str]) -> dict:
    """Fetch ``domain``'s files as configured in ``cfg`` (the ``corpora:`` params)."""
    spec = resolve_source(cfg, domain)
    adapter = get_adapter(spec.adapter)
    out_dir = Path(out_dir)
    staging = out_dir.with_name(f".{out_dir.name}.staging")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        result = adapter.download(spec, staging)
        manifest = {"domain": domain, "spec": spec.record(), **result}
        write_json_atomic(staging / DOWNLOAD_MANIFEST, manifest)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    log.info("%s: %d file(s) from %s -> %s", domain, len(manifest["files"]), spec.base, out_dir)
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = stage_parser(__doc__, params=Path("params.yaml"))
    parser.add_argument("--domain", required=True, choices=DOMAINS)
    parser.add_argument("--out", type=Path, help="output folder (default data/raw/<domain>)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    out = args.out or Path("data/raw") / args.domain

    def compute() -> StageOutput:
        manifest = run_download(load_params(args.params), args.domain, out)
        return StageOutput({}, f"{args.domain}: {len(manifest['files'])} file(s) -> {out}")

    return run_stage("download", compute, (CorpusError, FetchError))


if __name__ == "__main__":
    raise SystemExit(main())
