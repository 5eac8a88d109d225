"""``params.yaml`` generated from ``conf/``: one source for ``hope-run`` and the DVC pipeline.

    make params                          # rewrite params.yaml (python -m hope.pipeline.params)
    make params ARGS=experiment=mirror   # any Hydra override of conf/dvc_params.yaml
    make params ARGS=--check             # exit 1 if params.yaml is out of date

``conf/dvc_params.yaml`` composes the groups ``hope-run`` uses (common, corpus, llm, embedder,
experiment) and derives the sections the stages read from them. DVC composes the same file for
``dvc exp run -S key=value`` (``.dvc/config`` ``[hydra]``); ``compose_params`` returns what DVC
writes, less the ``experiment`` node the sections are computed from.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from hope.core.io import read_params, write_atomic
from hope.pipeline import CONF_DIR, REPO_ROOT
from hope.pipeline.config_schema import validate_params

CONFIG_NAME = "dvc_params"
# What the stages read, in params.yaml's order.
SECTIONS = (
    "corpora",
    "chunkers",
    "hope",
    "bleu",
    "rag",
    "labelled",
    "probe",
    "analysis",
    "tracking",
)

HEADER = """\
# GENERATED from conf/ by `make params` (python -m hope.pipeline.params{args}): do not edit.
# Edit conf/dvc_params.yaml or what it composes (conf/common.yaml, conf/experiment/, conf/corpus/,
# conf/corpora/), then run `make params`. `dvc exp run -S key=value` composes the same config
# (Hydra, see .dvc/config) and rewrites this file. See conf/README.md.
"""


def compose_params(
    overrides: Sequence[str] = (), conf_dir: str | Path = CONF_DIR
) -> dict[str, Any]:
    """The params.yaml sections from ``conf/dvc_params.yaml`` with Hydra ``overrides``, validated
    (``hope.pipeline.config_schema.Params``: a bad or missing key is a ConfigError naming it)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from hope.core import config_resolvers as resolvers

    resolvers.register()
    with initialize_config_dir(config_dir=str(Path(conf_dir).resolve()), version_base="1.3"):
        cfg = compose(CONFIG_NAME, overrides=list(overrides))
    composed = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(composed, dict)
    params = {name: composed[name] for name in SECTIONS if name in composed}
    validate_params(params, f"conf/{CONFIG_NAME}.yaml")
    return params


class _Dumper(yaml.SafeDumper):
    """Block lists indented under their key, as in the hand-written YAML of conf/."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        return super().increase_indent(flow, False)


def render(params: dict[str, Any], overrides: Sequence[str] = ()) -> str:
    args = "".join(f" {o}" for o in overrides)
    blocks = [
        yaml.dump(
            {name: value},
            Dumper=_Dumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=100,
        )
        for name, value in params.items()
    ]
    return HEADER.format(args=args) + "\n" + "\n".join(blocks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make params", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--output", type=Path, default=REPO_ROOT / "params.yaml", help="default: params.yaml"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the file's values differ from the composition",
    )
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. experiment=mirror")
    args = parser.parse_args(argv)

    try:
        params = compose_params(args.overrides)
    except Exception as exc:
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException

        if isinstance(exc, HydraException | OmegaConfBaseException | ValueError):
            print(f"make params: configuration error: {exc}", file=sys.stderr)
            return 2
        raise
    if args.check:
        current = read_params(args.output) if args.output.is_file() else None
        if current != params:
            print(f"{args.output} is out of date with conf/: run `make params`", file=sys.stderr)
            return 1
        print(f"{args.output} matches conf/")
        return 0
    write_atomic(args.output, render(params, args.overrides))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
