-- The latest materialised rankings (fabricscope/rank/ranking.py materialise): every preset workload
-- ranked over the offers of the snapshot named in based_on_snapshot.
create or replace view estimates_current as
select *
from estimates
where snapshot_id = (select max(snapshot_id) from estimates);

-- The latest materialised serving rankings (fabricscope/rank/materialised.py): every serving
-- preset in rankings.json ranked over the offers of the snapshot named in based_on_snapshot.
create or replace view serving_estimates_current as
select *
from serving_estimates
where snapshot_id = (select max(snapshot_id) from serving_estimates);
