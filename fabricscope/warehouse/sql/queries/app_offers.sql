-- The Offers page, ordered for a training buyer: prices one can count on, offers that cluster,
-- then the cheapest compute (per hour of the GPU's dense BF16 peak, so a $0.05 V100 does not
-- lead); spot and dynamic prices and single-node offers come last
-- (fabricscope/app/pages/offers.py).
select c.provider, c.instance_type, c.gpu_model, c.gpu_count, c.pricing_tier,
       case when c.multi_node then 'yes' when c.multi_node is null then 'unknown'
            else 'no' end as multi_node,
       c.price_usd_per_gpu_hour,
       c.price_usd_per_gpu_hour / (g.bf16_dense_tflops / 1000)
           as usd_per_bf16_pflop_hour,
       c.fabric_class, c.fabric_gbps_per_node, c.region, c.price_usd_per_hour,
       c.price_basis, c.gpu_name, c.fabric_match, c.rdma, c.price_source_url,
       c.price_obtained_by, c.price_observed_at, c.fabric_source_url,
       c.fabric_evidence, c.source
from instance_catalog c
left join gpus g on g.gpu_model = c.gpu_model
order by
    case
        when c.pricing_tier = 'on_demand' then 0
        when c.pricing_tier like 'reserved%' then 1
        when c.pricing_tier = 'spot' then 3
        else 2
    end,
    case when c.multi_node then 0 when c.multi_node is null then 1 else 2 end,
    usd_per_bf16_pflop_hour nulls last,
    c.price_usd_per_gpu_hour, c.provider, c.instance_type, c.region
