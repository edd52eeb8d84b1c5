-- Published rows belong to a run recorded as ok; failed runs publish nothing.
select 'offers_history' as in_table, h.run_id, count(*) as rows_
from checked_offers as h
left join scrape_runs as r on h.run_id = r.run_id
where r.status is distinct from 'ok'
group by h.run_id
union all
select 'fabric_history', h.run_id, count(*)
from checked_fabric as h
left join scrape_runs as r on h.run_id = r.run_id
where r.status is distinct from 'ok'
group by h.run_id;
