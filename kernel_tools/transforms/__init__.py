"""Pure transforms: each returns a new frame and a StepReport, never changing its input.

Steps that learn from data (column drops, dtype rules, category maps, unit rules, imputers,
outlier bounds, the aggregation spec) also expose a fitted scikit-learn transformer in
``report.transformer``; ``report.apply(test)`` replays it unchanged on new data, and the
fitted transformers can be chained in one ``sklearn.pipeline.Pipeline``.
"""

from .blocks import BlockNumberer, number_blocks
from .categories import CategoryNormalizer, normalize_categories
from .columns import ColumnDropper, deduplicate, drop_columns, drop_rows
from .doses import DoseHistory, dose_history
from .dtypes import DtypeFixer, fix_dtypes
from .entities import EntityAggregator, aggregate_per_entity
from .imputation import Imputer, impute
from .intervals import IntervalBuilder, drop_empty_intervals, to_intervals
from .joins import join_files, join_frames
from .labels import handle_label_issues
from .levels import LevelRanker, rank_levels
from .outliers import OutlierHandler, handle_outliers
from .records import RecordSummarizer, summarize_records
from .redcap import RedcapBaseline, redcap_baseline
from .report import StepReport
from .splitting import split
from .status import StatusRecoder, recode_status
from .transitions import FirstTransition, first_transition
from .units import UnitConverter, convert_units

__all__ = [
    "BlockNumberer",
    "CategoryNormalizer",
    "ColumnDropper",
    "DoseHistory",
    "DtypeFixer",
    "EntityAggregator",
    "FirstTransition",
    "Imputer",
    "LevelRanker",
    "IntervalBuilder",
    "OutlierHandler",
    "RecordSummarizer",
    "RedcapBaseline",
    "StatusRecoder",
    "StepReport",
    "UnitConverter",
    "aggregate_per_entity",
    "convert_units",
    "deduplicate",
    "dose_history",
    "drop_empty_intervals",
    "drop_rows",
    "drop_columns",
    "first_transition",
    "fix_dtypes",
    "handle_label_issues",
    "handle_outliers",
    "impute",
    "join_files",
    "join_frames",
    "normalize_categories",
    "number_blocks",
    "rank_levels",
    "recode_status",
    "redcap_baseline",
    "split",
    "summarize_records",
    "to_intervals",
]
