-- The latest materialised rankings (fabricscope/rank/ranking.py materialise): every preset workload
-- ranked over the offers of the snapshot named in based_on_snapshot.
create or replace view estimates_current as
select *
from estimates
where snapshot_id = (select max(snapshot_id) from estimates);
