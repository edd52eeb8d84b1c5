-- Every part of a training step the model declares (fabricscope/model/scaling.py STEP_PARTS) is
-- stored with the materialised rankings: context parallelism's exposed exchange and the compute
-- slowed by the collectives it overlaps joined the parts, so the parts sum to step_time_s.
alter table estimates add column overlap_contention_s double;
alter table estimates add column cp_comm_s double;
