"""Find every data-centric issue of the taxonomy, with evidence and recommended options."""

from kernel_tools.diagnosis.joins import diagnose_join
from kernel_tools.diagnosis.runner import diagnose

__all__ = ["diagnose", "diagnose_join"]
