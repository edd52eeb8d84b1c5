-- Published views: the names people, the app and saved SQL rely on. Keep them stable.

-- Offers of each source's last good run.
create or replace view offers_current as
select
    o.provider,
    o.source,
    o.instance_type,
    o.region,
    o.zones,
    o.gpu_name,
    o.gpu_model,
    o.gpu_count,
    o.gpu_memory_gb,
    o.vcpus,
    o.ram_gb,
    o.pricing_tier,
    o.price_basis,
    o.price,
    o.currency,
    o.price_usd_per_hour,
    o.price_usd_per_gpu_hour,
    o.availability,
    o.source_url,
    o.obtained_by,
    o.observed_at,
    o.run_id
from offers_history as o
inner join stg_last_good_runs as g on o.run_id = g.run_id;

-- Fabric facts of each source's last good run.
create or replace view fabric_current as
select
    f.provider,
    f.source,
    f.instance_type,
    f.gpu_name,
    f.gpu_model,
    f.fabric_class,
    f.fabric_product,
    f.fabric_gbps_per_node,
    f.fabric_gbps_per_gpu,
    f.rdma,
    f.gpudirect_rdma,
    f.multi_node,
    f.max_cluster_gpus,
    f.topology,
    f.intra_node_link,
    f.published_benchmark_url,
    f.source_url,
    f.evidence,
    f.source_date,
    f.obtained_by,
    f.source_grade,
    f.observed_at,
    f.run_id
from fabric_history as f
inner join stg_last_good_runs as g on f.run_id = g.run_id;

-- One fabric fact per provider and instance type: a known class beats 'unknown',
-- then the most recently observed, then the source name for a stable choice.
create or replace view stg_fabric_best as
with ranked as (
    select
        *,
        row_number() over (
            partition by provider, instance_type
            order by (fabric_class = 'unknown'), observed_at desc, source
        ) as preference
    from fabric_current
)
select * exclude (preference)
from ranked
where preference = 1;

-- The fabric of each current offer: the fact for its instance type if one exists, else the
-- fact of the product line a sourced row of fabric_product_lines puts it in; fabric_match
-- says which. Never by GPU family: one provider sells the same GPU on different fabrics
-- (CoreWeave's H100 PCIe and its HGX H100 InfiniBand pools).
create or replace view stg_offer_fabric as
with candidates as (
    select
        o.run_id, o.instance_type, o.region, o.pricing_tier,
        1 as priority, 'instance_type' as fabric_match,
        f.instance_type as fact_instance_type,
        f.* exclude (provider, source, instance_type, gpu_name, gpu_model, run_id)
    from offers_current as o
    inner join stg_fabric_best as f
        on o.provider = f.provider and o.instance_type = f.instance_type
    union all by name
    select
        o.run_id, o.instance_type, o.region, o.pricing_tier,
        2 as priority, 'product_line' as fabric_match,
        f.instance_type as fact_instance_type,
        f.* exclude (provider, source, instance_type, gpu_name, gpu_model, run_id)
    from offers_current as o
    inner join fabric_product_lines as line
        on o.provider = line.provider and o.instance_type = line.instance_type
    inner join stg_fabric_best as f
        on line.provider = f.provider and line.product_line = f.instance_type
)
select
    run_id,
    instance_type,
    region,
    pricing_tier,
    fabric_class,
    fabric_match,
    fabric_product,
    fabric_gbps_per_node,
    fabric_gbps_per_gpu,
    rdma,
    gpudirect_rdma,
    multi_node,
    max_cluster_gpus,
    intra_node_link,
    fact_instance_type as fabric_fact_instance_type,
    source_url as fabric_source_url,
    evidence as fabric_evidence,
    obtained_by as fabric_obtained_by,
    source_grade as fabric_source_grade,
    source_date as fabric_source_date,
    observed_at as fabric_observed_at
from (
    select
        *,
        row_number() over (
            partition by run_id, instance_type, region, pricing_tier order by priority
        ) as preference
    from candidates
)
where preference = 1;

-- Current offers with their GPU's specs and their fabric.
-- Fabric columns are NULL where the fabric is unknown.
create or replace view instance_catalog as
select
    o.provider,
    o.source,
    o.instance_type,
    o.region,
    o.zones,
    o.gpu_name,
    o.gpu_model,
    o.gpu_count,
    coalesce(o.gpu_memory_gb, g.memory_gb) as gpu_memory_gb,
    o.vcpus,
    o.ram_gb,
    o.pricing_tier,
    o.price_basis,
    o.price_usd_per_hour,
    o.price_usd_per_gpu_hour,
    o.availability,
    o.source_url as price_source_url,
    o.obtained_by as price_obtained_by,
    o.observed_at as price_observed_at,
    g.vendor as gpu_vendor,
    g.form_factor as gpu_form_factor,
    g.bf16_dense_tflops,
    g.fp8_dense_tflops,
    g.fp4_dense_tflops,
    g.hbm_tbps,
    g.scaleup_link,
    g.scaleup_gbps_per_gpu,
    nullif(f.fabric_class, 'unknown') as fabric_class,
    f.fabric_match,
    f.fabric_product,
    f.fabric_gbps_per_node,
    f.fabric_gbps_per_gpu,
    f.rdma,
    f.gpudirect_rdma,
    -- why the offer can form a cluster or not: a stated fact wins; a marketplace host or a
    -- single-GPU instance is no cluster unless a source says so (a per-GPU price on an
    -- SXM/superchip listing is a slice of a whole node, so it stays unknown)
    case
        when f.multi_node then 'multi-node stated by ' || f.fabric_source_url
        when not f.multi_node then 'single-node only, per ' || f.fabric_source_url
        when p.kind = 'marketplace'
            then 'a marketplace host (' || o.provider || '): not a cluster unless a source says so'
        when o.gpu_count = 1
            and not (
                coalesce(g.form_factor, '') in ('sxm', 'superchip')
                and o.price_basis in ('per_gpu', 'gpu_only_host_extra')
            )
            then 'a single-GPU instance: no source states cluster networking for it'
        else 'not stated by any source'
    end as multi_node_reason,
    -- true, false or NULL (unknown), following that reason
    case
        when f.multi_node is not null then f.multi_node
        when multi_node_reason <> 'not stated by any source' then false
    end as multi_node,
    f.max_cluster_gpus,
    f.intra_node_link,
    f.fabric_fact_instance_type,
    f.fabric_source_url,
    f.fabric_evidence,
    f.fabric_obtained_by,
    f.fabric_source_grade,
    f.fabric_source_date,
    f.fabric_observed_at,
    p.kind as provider_kind
from offers_current as o
left join providers as p on o.provider = p.provider
left join gpus as g on o.gpu_model = g.gpu_model
left join stg_offer_fabric as f
    on o.run_id = f.run_id
    and o.instance_type = f.instance_type
    and o.region is not distinct from f.region
    and o.pricing_tier = f.pricing_tier;

-- Daily price per provider, instance type, region and tier, from every good run.
create or replace view price_history_daily as
select
    o.provider,
    o.instance_type,
    o.region,
    o.pricing_tier,
    o.gpu_model,
    o.gpu_count,
    cast(timezone('UTC', o.observed_at) as date) as day,
    min(o.price_usd_per_gpu_hour) as min_usd_per_gpu_hour,
    avg(o.price_usd_per_gpu_hour) as avg_usd_per_gpu_hour,
    max(o.price_usd_per_gpu_hour) as max_usd_per_gpu_hour,
    count(*) as observations
from offers_history as o
inner join scrape_runs as r on o.run_id = r.run_id and r.status = 'ok'
group by all;

-- Per source: the last good run, the last attempt, and how old its data is. The age is
-- that of the data (when its rows were observed), not of the run: a replayed recording
-- from last year is last year's data.
create or replace view source_freshness as
with attempts as (
    select
        source,
        max(coalesce(finished_at, started_at)) as last_attempt_at,
        arg_max(status, coalesce(finished_at, started_at)) as last_status,
        arg_max(error_text, coalesce(finished_at, started_at)) as last_error,
        count(*) filter (where status = 'ok') as ok_runs,
        count(*) as runs
    from scrape_runs
    group by source
),
consecutive as (
    -- failures since the last good run
    select r.source, count(*) as failures_since_last_good
    from scrape_runs as r
    left join stg_last_good_runs as g on r.source = g.source
    where r.status <> 'ok'
      and (g.finished_at is null or coalesce(r.finished_at, r.started_at) > g.finished_at)
    group by r.source
),
observed as (
    select run_id, max(observed_at) as data_as_of
    from (
        select run_id, observed_at from offers_history
        union all
        select run_id, observed_at from fabric_history
    )
    where run_id in (select run_id from stg_last_good_runs)
    group by run_id
)
select
    a.source,
    g.finished_at as last_good_at,
    g.run_id as last_good_run_id,
    o.data_as_of,
    a.last_attempt_at,
    a.last_status,
    a.last_error,
    coalesce(c.failures_since_last_good, 0) as failures_since_last_good,
    a.ok_runs,
    a.runs,
    round(epoch(now() - coalesce(o.data_as_of, g.finished_at)) / 3600.0, 2) as age_hours
from attempts as a
left join stg_last_good_runs as g on a.source = g.source
left join observed as o on g.run_id = o.run_id
left join consecutive as c on a.source = c.source;
