-- When each source last ran, for the scheduler's catch-up (fabricscope/ops/schedule.py).
select source, max(coalesce(finished_at, started_at)) as last_run
from scrape_runs
group by source
