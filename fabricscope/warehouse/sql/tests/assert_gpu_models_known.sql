-- A GPU model is either a canonical id from gpus.csv or NULL (unknown), never a guess.
select 'offers_history' as in_table, run_id, provider, instance_type, gpu_model
from checked_offers as o
where gpu_model is not null
  and not exists (select 1 from gpus as g where g.gpu_model = o.gpu_model)
union all
select 'fabric_history', run_id, provider, instance_type, gpu_model
from checked_fabric as f
where gpu_model is not null
  and not exists (select 1 from gpus as g where g.gpu_model = f.gpu_model);
