-- One offer per provider, instance type, region and tier within a run.
select run_id, provider, instance_type, region, pricing_tier, count(*) as copies
from checked_offers
group by run_id, provider, instance_type, region, pricing_tier
having count(*) > 1;
