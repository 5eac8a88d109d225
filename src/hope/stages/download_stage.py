"""DVC stage ``download@<domain>``: fetch one corpus's raw files into ``data/raw/<domain>``.

The stage writes into a staging folder and swaps it into place only when every file has been
fetched and verified, so a failure never leaves a half-filled output folder behind.
"""

from __future__ import annotations

import logging
from pathlib import Path

from hope.corpora import DOMAINS
from hope.corpora.base import CorpusError
from hope.corpora.corpus_config import load_params
from hope.corpora.fetch import FetchError
from hope.corpora.pinning import (
    DEFAULT_LOCK,
    env_flag,
)
from hope.pipeline.download_step import run_download
from hope.pipeline.stage_support import StageOutput, run_stage, stage_parser


def main(argv: list[str] | None = None) -> int:
    parser = stage_parser(__doc__, params=Path("params.yaml"))
    parser.add_argument("--domain", required=True, choices=DOMAINS)
    parser.add_argument("--out", type=Path, help="output folder (default data/raw/<domain>)")
    parser.add_argument(
        "--checksum-lock",
        type=Path,
        default=DEFAULT_LOCK,
        help=f"sha256 of every downloaded online file (default {DEFAULT_LOCK})",
    )
    parser.add_argument(
        "--update-checksums",
        action="store_true",
        default=env_flag("HOPE_UPDATE_CHECKSUMS"),
        help="accept online files whose sha256 changed and record the new one "
        "(also HOPE_UPDATE_CHECKSUMS=1)",
    )
    parser.add_argument(
        "--allow-unpinned",
        action="store_true",
        default=env_flag("HOPE_ALLOW_UNPINNED"),
        help="download a Hugging Face source whose revision is not a commit "
        "(also HOPE_ALLOW_UNPINNED=1)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    out = args.out or Path("data/raw") / args.domain

    def compute() -> StageOutput:
        manifest = run_download(
            load_params(args.params),
            args.domain,
            out,
            lock_path=args.checksum_lock,
            update_checksums=args.update_checksums,
            allow_unpinned=args.allow_unpinned,
        )
        return StageOutput({}, f"{args.domain}: {len(manifest['files'])} file(s) -> {out}")

    return run_stage("download", compute, (CorpusError, FetchError))


if __name__ == "__main__":
    raise SystemExit(main())
