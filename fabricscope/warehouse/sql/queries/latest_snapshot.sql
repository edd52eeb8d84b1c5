-- The newest snapshot's id (fabricscope/evidence/transparency.py, on a connection the caller owns).
select max(snapshot_id) as snapshot_id from snapshots
