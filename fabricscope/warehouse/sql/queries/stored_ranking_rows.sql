-- A stored ranking's ranked rows, in rank order (fabricscope/rank/materialised.py). Parameters: snapshot_id, request_json.
select *
from estimates
where snapshot_id = ? and request_json = ?
order by rank
