-- Failures since each source's last good run, for the scheduler's backoff (fabricscope/ops/schedule.py).
select source, failures_since_last_good from source_freshness
