-- Every current offer with its fabric and GPU, and every quote the buyer entered, each with what its provider states storage, egress and support cost, as the ranking reads them (fabricscope/rank/ranking.py).
select
    o.*,
    c.storage_usd_per_tb_month as cost_storage_usd_per_tb_month,
    c.egress_usd_per_gb as cost_egress_usd_per_gb,
    c.support_uplift_pct as cost_support_uplift_pct,
    c.source as cost_source
from (
    select * from instance_catalog
    union all by name
    select * from quote_offers
) as o
left join provider_costs as c on o.provider = c.provider
