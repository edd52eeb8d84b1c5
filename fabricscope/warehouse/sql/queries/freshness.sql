-- Each source's freshness, for `fabricscope status`, the app's status line and the scheduler (fabricscope/ops/status.py).
select source, data_as_of, last_good_at, last_status, failures_since_last_good, age_hours,
       last_error
from source_freshness
order by source
