from __future__ import annotations

import pandas as pd
import pytest

from hope.analysis.pair_table import join_pairs

from .synthetic import make_tables


@pytest.fixture
def tables() -> dict[str, pd.DataFrame]:
    """7 documents x 8 chunkers, like the sample profile, with three undefined HOPE scores."""
    return make_tables(1, seed=3, nan_scores=3)


@pytest.fixture
def pairs(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    frame, _ = join_pairs(tables["scores"], tables["bleu"], tables["ragas"])
    return frame
