"""HOPE: Holistic Passage Evaluation, a label-free metric for text chunking."""

from hope import resolvers
from hope.evaluate import HopeEvaluator, InputError, evaluate
from hope.result import HopeResult
from hope.settings import HopeSettings, load_profile

__all__ = ["HopeEvaluator", "HopeResult", "HopeSettings", "InputError", "evaluate", "load_profile"]
__version__ = "0.1.0"

# ${hope.as_overrides:...} of conf/dvc_params.yaml; Hydra imports this package for pkg://hope.conf.
resolvers.register()
