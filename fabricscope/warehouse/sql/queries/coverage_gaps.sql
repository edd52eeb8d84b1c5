-- Cluster-capable instance types still without a fabric class, and why (fabricscope/ops/status.py).
select provider, instance_type, gpu_model, gpu_count, offers, sources, why
from fabric_coverage_gaps
