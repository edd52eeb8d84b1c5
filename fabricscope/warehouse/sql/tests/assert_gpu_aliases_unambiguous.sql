-- A spelling maps to one GPU model only (matching is exact after normalisation).
select match_key, list(distinct gpu_model) as models
from gpu_aliases
group by match_key
having count(distinct gpu_model) > 1;
