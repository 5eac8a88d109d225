"""The project's prompts (``hope/core/prompts``, ``hope.core.prompting``) in MLflow's prompt
registry.

Each prompt is registered under its own name; MLflow numbers the versions itself (1, 2, ...), so
each registered version carries the project's identity as tags: ``hope.version`` (the file's
``version:``) and ``hope.prompt_id`` (``name@vN#texthash``). A prompt whose identity is registered
already is not registered again. Runs link the registered versions they used (MLflow's
``mlflow.linkedPrompts`` run tag), and each prompt belongs to the experiment of those runs
(MLflow's prompt tag ``_mlflow_experiment_ids``, what the experiment's Prompts tab and
``search_prompts(filter_string="experiment_id = '<id>'")`` list). ``MlflowClient.register_prompt``
links a new prompt to the *process's* current experiment, which for a client-only logger like
this one is the default experiment 0; the registration runs with that set to the runs'
experiment, and the link is then made explicitly, for versions registered earlier too.

The template is the chat (system and user message) with the ``{field}`` slots written as MLflow's
``{{field}}`` variables.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from typing import Any

from hope.tracking.names import name_part
from hope.tracking.store import with_retry

ID_TAG = "hope.prompt_id"
# mlflow.prompt.constants.PROMPT_EXPERIMENT_IDS_TAG_KEY: ",1,4," (commas around every id)
EXPERIMENTS_TAG = "_mlflow_experiment_ids"
VERSION_TAG = "hope.version"


def mlflow_template(text: str) -> str:
    """``str.format`` slots (``{passage}``) as MLflow template variables (``{{passage}}``); an
    escaped brace (``{{``) is the brace itself."""
    parts: list[str] = []
    for literal, field, _, _ in string.Formatter().parse(text):
        parts.append(literal)
        if field is not None:
            parts.append("{{" + field + "}}")
    return "".join(parts)


def registry_name(name: str) -> str:
    # Prompt names take letters, digits, _ - . only.
    return re.sub(r"[^A-Za-z0-9_\-.]", "_", name_part(name))


def register_prompt(client: Any, name: str, prompt: Mapping[str, Any]) -> Any:
    """The registered version of ``prompt`` (a ``Prompt.to_dict()``), registering it if needed."""
    prompt_id = str(prompt.get("id") or "")
    if not prompt_id:
        raise ValueError(f"prompt {name!r} has no id (name@vN#hash): {sorted(prompt)}")
    reg_name = registry_name(name)
    for version in _versions(client, reg_name):
        if version.tags.get(ID_TAG) == prompt_id:
            return version
    template = [
        {"role": role, "content": mlflow_template(str(prompt[role]).strip())}
        for role in ("system", "user")
        if prompt.get(role)
    ]
    if not template:
        raise ValueError(f"prompt {name!r} ({prompt_id}) has no system or user text")
    tags = {ID_TAG: prompt_id, VERSION_TAG: str(prompt.get("version", ""))}
    if prompt.get("purpose"):
        tags["hope.purpose"] = str(prompt["purpose"])[:5000]
    from mlflow.exceptions import MlflowException

    def register():
        return with_retry(
            lambda: client.register_prompt(
                reg_name, template, commit_message=f"hope prompt {prompt_id}", tags=tags
            )
        )

    try:
        return register()
    except MlflowException as exc:
        # A parallel job (a joblib sweep) created the prompt between the lookup and here: take
        # its version if it is this prompt, else add ours to the prompt it created.
        if "already exists" not in str(exc):
            raise
        for version in _versions(client, reg_name):
            if version.tags.get(ID_TAG) == prompt_id:
                return version
        return register()


def _versions(client: Any, name: str) -> list[Any]:
    from mlflow.exceptions import MlflowException

    versions: list[Any] = []
    token = None
    while True:
        try:
            page = client.search_prompt_versions(name, max_results=100, page_token=token)
        except MlflowException:
            return versions  # no prompt of that name yet
        versions.extend(page)
        token = getattr(page, "token", None)
        if not token:
            return versions


@contextmanager
def _current_experiment(experiment_id: str | None) -> Iterator[None]:
    """The process's current experiment set to ``experiment_id`` for the block: the experiment
    ``MlflowClient.register_prompt`` links a new prompt to (``mlflow.tracking.fluent``'s
    ``_get_experiment_id``). Its active-experiment global is used because the environment
    variable would be checked through the global tracking URI, not the client's."""
    from mlflow.tracking import fluent

    if experiment_id is None or not hasattr(fluent, "_active_experiment_id"):
        yield
        return
    saved = fluent._active_experiment_id
    fluent._active_experiment_id = str(experiment_id)
    try:
        yield
    finally:
        fluent._active_experiment_id = saved


def _experiment_link_lock() -> Any:
    """The lock MLflow's own experiment link holds (``mlflow.tracking.client``): for a prompt it
    has just created, ``MlflowClient.register_prompt`` sets the same tag from a thread of its
    own, and two writers that both find the tag missing both insert it (a unique-key error)."""
    from mlflow.tracking import client as tracking_client

    return getattr(tracking_client, "_prompt_experiment_link_lock", None) or nullcontext()


def link_to_experiment(client: Any, name: str, experiment_id: str) -> None:
    """Add ``experiment_id`` to the prompt's experiments (its ``_mlflow_experiment_ids`` tag).

    A write that fails is read again once: another writer (MLflow's thread, without its lock in
    another MLflow version, or a parallel job) may have inserted the tag between the read and
    the write, and the second write updates the row it made."""
    from mlflow.exceptions import MlflowException

    with _experiment_link_lock():
        for attempt in range(2):
            prompt = with_retry(lambda: client.get_prompt(name))
            current = (prompt.tags or {}).get(EXPERIMENTS_TAG, "") if prompt is not None else ""
            ids = [i.strip() for i in current.split(",") if i.strip()]
            if str(experiment_id) in ids:
                return
            value = "," + ",".join([*ids, str(experiment_id)]) + ","
            try:
                with_retry(lambda value=value: client.set_prompt_tag(name, EXPERIMENTS_TAG, value))
                return
            except MlflowException:
                if attempt:
                    raise


def register_and_link(
    client: Any,
    prompts: Mapping[str, Mapping[str, Any]],
    run_ids: list[str],
    experiment_id: str | None = None,
) -> dict[str, str]:
    """Register every prompt, link its version to each run and the prompt to ``experiment_id``
    (the runs' experiment); returns name -> ``prompts:/n/v``."""
    with _current_experiment(experiment_id):
        versions = {name: register_prompt(client, name, p) for name, p in sorted(prompts.items())}
    for run_id in run_ids:
        link_to_run(client, run_id, list(versions.values()))
    if experiment_id is not None:
        for registered in sorted({v.name for v in versions.values()}):
            link_to_experiment(client, registered, str(experiment_id))
    return {name: f"prompts:/{v.name}/{v.version}" for name, v in versions.items()}


def link_to_run(client: Any, run_id: str, versions: list[Any]) -> None:
    """Add ``versions`` to the run's ``mlflow.linkedPrompts`` tag, as
    ``MlflowClient.link_prompt_version_to_run`` does; that one reads the run through the
    process-global tracking URI, not the client's, so the tag is set here through the client."""
    from mlflow.tracing.constant import TraceTagKey
    from mlflow.tracing.utils.prompt import update_linked_prompts_tag

    current = client.get_run(run_id).data.tags.get(TraceTagKey.LINKED_PROMPTS)
    updated = update_linked_prompts_tag(current, versions)
    if updated != current:
        with_retry(lambda: client.set_tag(run_id, TraceTagKey.LINKED_PROMPTS, updated))
