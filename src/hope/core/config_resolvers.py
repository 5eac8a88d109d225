"""OmegaConf resolvers of the repository's Hydra configs, registered when ``hope`` is imported.

``${hope.as_overrides:NODE}`` turns a config node into Hydra overrides, one ``hope.<path>=<value>``
per leaf, in the node's order. ``conf/dvc_params.yaml`` uses it to pass the experiment's changes of
the HOPE profile (``hope:`` in ``conf/experiment/<name>.yaml``, which ``hope-run`` merges into its
``hope`` node) to the DVC ``hope`` stage as ``params.yaml`` ``hope.overrides``.

Hydra imports the ``hope`` package whenever a config's search path names ``pkg://hope.conf``, DVC's
Hydra composition (``dvc exp run -S ...``) included, so the resolver exists before the composed
config is resolved.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from omegaconf import OmegaConf

# Strings Hydra's override parser reads back unchanged without quotes.
_PLAIN = re.compile(r"^[A-Za-z_/][\w./-]*$")
_KEYWORDS = {"true", "false", "null", "nan", "inf"}


def override_value(value: Any) -> str:
    """``value`` in Hydra's override grammar (``null``, ``true``, ``[1,2]``, ``'a b'``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        if _PLAIN.match(value) and value.lower() not in _KEYWORDS:
            return value
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{override_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Sequence):
        return "[" + ",".join(override_value(v) for v in value) + "]"
    raise TypeError(f"no override syntax for {type(value).__name__}: {value!r}")


def as_overrides(node: Any, prefix: str = "hope") -> list[str]:
    """``{"a": 1, "b": {"c": None}}`` -> ``["hope.a=1", "hope.b.c=null"]``; None -> ``[]``."""
    if node is None:
        return []
    if OmegaConf.is_config(node):
        node = OmegaConf.to_container(node, resolve=True)
    if not isinstance(node, Mapping):
        raise TypeError(f"hope.as_overrides needs a mapping, got {type(node).__name__}")
    overrides: list[str] = []
    for key, value in node.items():
        path = f"{prefix}.{key}"
        if isinstance(value, Mapping):
            overrides.extend(as_overrides(value, path))
        else:
            overrides.append(f"{path}={override_value(value)}")
    return overrides


def _as_overrides_node(node: Any, prefix: str = "hope") -> Any:
    # A ListConfig, not a list: OmegaConf.resolve (DVC resolves the composed config in place
    # before dumping it) cannot store a plain list returned by a resolver.
    return OmegaConf.create(as_overrides(node, prefix))


def register() -> None:
    if not OmegaConf.has_resolver("hope.as_overrides"):
        OmegaConf.register_new_resolver("hope.as_overrides", _as_overrides_node)
