-- Quotes the buyer entered (migrations/0008_quotes.sql), shaped like instance_catalog so the
-- ranking reads them beside the list offers (queries/rank_offers.sql). A quote's price and
-- fabric are the provider's own word to the buyer: obtained_by 'quote', graded 'provider', dated
-- the day it was quoted. What the quote does not state stays NULL.
create or replace view quote_offers as
select
    q.provider,
    'quote' as source,
    q.configuration as instance_type,
    q.region,
    cast(null as integer) as zones,
    q.gpu_model as gpu_name,
    q.gpu_model,
    q.gpus_per_node as gpu_count,
    g.memory_gb as gpu_memory_gb,
    cast(null as double) as vcpus,
    cast(null as double) as ram_gb,
    q.pricing_tier,
    'per_instance' as price_basis,
    q.price_usd_per_gpu_hour * q.gpus_per_node as price_usd_per_hour,
    q.price_usd_per_gpu_hour,
    case
        when q.available_from is not null
            then 'available from ' || strftime(q.available_from, '%Y-%m-%d')
    end as availability,
    q.source_url as price_source_url,
    'quote' as price_obtained_by,
    cast(q.quoted_at as timestamp) at time zone 'UTC' as price_observed_at,
    g.vendor as gpu_vendor,
    g.form_factor as gpu_form_factor,
    g.bf16_dense_tflops,
    g.fp8_dense_tflops,
    g.fp4_dense_tflops,
    g.hbm_tbps,
    g.scaleup_link,
    g.scaleup_gbps_per_gpu,
    nullif(q.fabric_class, 'unknown') as fabric_class,
    'quote' as fabric_match,
    cast(null as varchar) as fabric_product,
    cast(null as double) as fabric_gbps_per_node,
    q.fabric_gbps_per_gpu,
    cast(null as boolean) as rdma,
    cast(null as boolean) as gpudirect_rdma,
    case
        when q.multi_node then 'multi-node stated in quote ' || q.quote_id
        when not q.multi_node then 'single-node only, per quote ' || q.quote_id
        when q.fabric_class = 'none' then 'no cluster fabric, per quote ' || q.quote_id
        else 'not stated in quote ' || q.quote_id
    end as multi_node_reason,
    case
        when q.multi_node is not null then q.multi_node
        when q.fabric_class = 'none' then false
    end as multi_node,
    q.gpus as max_cluster_gpus,
    cast(null as varchar) as intra_node_link,
    case when q.fabric_class is not null then q.configuration end as fabric_fact_instance_type,
    case when q.fabric_class is not null then q.source_url end as fabric_source_url,
    case
        when q.fabric_class is not null
            then coalesce(q.fabric_note, 'stated in quote ' || q.quote_id)
    end as fabric_evidence,
    case when q.fabric_class is not null then 'quote' end as fabric_obtained_by,
    case when q.fabric_class is not null then 'provider' end as fabric_source_grade,
    case when q.fabric_class is not null then q.quoted_at end as fabric_source_date,
    case
        when q.fabric_class is not null
            then cast(q.quoted_at as timestamp) at time zone 'UTC'
    end as fabric_observed_at,
    p.kind as provider_kind,
    q.quote_id,
    q.valid_until as quote_valid_until,
    q.sold_by as quote_sold_by,
    q.source as quote_source,
    q.available_from as quote_available_from,
    q.term_months as quote_term_months,
    q.min_commit_gpus as quote_min_commit_gpus,
    q.min_commit_months as quote_min_commit_months,
    q.booked_from as quote_booked_from,
    q.booked_to as quote_booked_to
from quotes as q
left join providers as p on q.provider = p.provider
left join gpus as g on q.gpu_model = g.gpu_model;
