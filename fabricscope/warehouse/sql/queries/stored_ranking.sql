-- A stored ranking of one request in one estimates snapshot: what it was based on and by which code (fabricscope/rank/materialised.py). Parameters: snapshot_id, request_json.
select based_on_snapshot, profiles_estimated, ranking_version, computed_at
from estimate_rankings
where snapshot_id = ? and request_json = ?
