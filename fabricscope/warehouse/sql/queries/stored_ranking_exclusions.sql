-- A stored ranking's excluded offers, in the order ranked (fabricscope/rank/materialised.py). Parameters: snapshot_id, request_json.
select *
from estimate_exclusions
where snapshot_id = ? and request_json = ?
order by rowid
