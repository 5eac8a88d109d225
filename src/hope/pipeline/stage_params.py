"""params.yaml as a DVC stage reads it: the sections the stage needs, each validated once, at the
stage's entry, with the model :class:`hope.pipeline.config_schema.Params` gives that section.

``make params`` checks the whole file with the same models, so a stage never meets a value that
``Params`` would refuse; reading only the stage's sections keeps each stage runnable on a params
file that holds just what it needs (as ``dvc repro`` passes it, and as the tests write it). What a
stage hands the pipeline library is therefore typed (``BleuParams``, ``HopeStageParams``,
``LabelledParams``, ``RagConfig``, the chunker list), never the raw mapping.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import TypeAdapter, ValidationError

from hope.core.hope_settings import ConfigError, describe
from hope.core.io import read_params
from hope.pipeline.config_schema import Params


def params_section(params: dict[str, Any], name: str, where: str | Path) -> Any:
    """Section ``name`` of a loaded params mapping, validated with its ``Params`` field; a
    ConfigError naming ``where`` and the dotted key when it is missing or wrong."""
    field = Params.model_fields.get(name)
    if field is None:
        raise KeyError(
            f"params.yaml has no section {name!r}; sections: {list(Params.model_fields)}"
        )
    if name not in params:
        if field.is_required():
            raise ConfigError(f"params file {where}: section {name!r} is missing")
        return field.get_default(call_default_factory=True)
    constraints = tuple(field.metadata)  # e.g. min_length of ``chunkers``
    adapter = TypeAdapter(
        Annotated[(field.annotation, *constraints)] if constraints else field.annotation
    )
    try:
        return adapter.validate_python(params[name])
    except ValidationError as exc:
        raise ConfigError(f"params file {where}: {describe(exc, name)}") from None


def stage_params(path: str | Path, *sections: str) -> dict[str, Any]:
    """The named sections of the params file at ``path``, validated (see :func:`params_section`)."""
    params = read_params(path)
    return {name: params_section(params, name, path) for name in sections}
