"""The bottom layer: the metric (sub-metrics, equations, evaluator) and what it stands on (its
settings, prompts, result, text splitting, file I/O and the response cache). Imports nothing from
the layers above it; the models it needs are injected through ``hope.core.model_interface``."""
