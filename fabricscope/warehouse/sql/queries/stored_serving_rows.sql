-- A stored serving ranking's ranked rows, in rank order (fabricscope/rank/materialised.py). Parameters: snapshot_id, request_json.
select *
from serving_estimates
where snapshot_id = ? and request_json = ?
order by rank
