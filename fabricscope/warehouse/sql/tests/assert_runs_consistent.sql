-- Finished runs have a finish time after their start; ok runs carry a content hash.
select run_id, source, status, started_at, finished_at, content_hash
from scrape_runs
where (status <> 'running' and finished_at is null)
   or finished_at < started_at
   or (status = 'ok' and content_hash is null);
