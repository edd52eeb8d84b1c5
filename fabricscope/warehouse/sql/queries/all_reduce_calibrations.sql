-- Stored multi-node all-reduce calibrations, one per provider and fabric class, for the ranking (fabricscope/evidence/calibrate.py).
select provider, fabric_class, calibration_id, n_ranks, n_nodes, gpus_per_node, busbw_gbytes_s,
       alpha_us
from calibration_current
where collective = 'all_reduce' and n_nodes > 1
