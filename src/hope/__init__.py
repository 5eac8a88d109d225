"""HOPE: Holistic Passage Evaluation, a label-free metric for text chunking."""

from hope.core import config_resolvers as resolvers
from hope.core.evaluator import HopeEvaluator, InputError, evaluate
from hope.core.hope_settings import HopeSettings, load_profile
from hope.core.result import HopeResult

__all__ = ["HopeEvaluator", "HopeResult", "HopeSettings", "InputError", "evaluate", "load_profile"]
__version__ = "0.1.0"

# ${hope.as_overrides:...} of conf/dvc_params.yaml; Hydra imports this package for pkg://hope.conf.
resolvers.register()
