-- Serving views: the names people, the app and saved SQL rely on. Keep them stable.

-- Offers of each source's last good run.
create or replace view offers_current as
select
    o.provider,
    o.source,
    o.instance_type,
    o.region,
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

-- GPU families ("H100", "A100", "MI300X"): the first part of each canonical id.
create or replace view stg_gpu_families as
select distinct split_part(gpu_model, '-', 1) as gpu_family
from gpus;

-- Fabric facts stated for a provider's product line rather than one instance type
-- ("HGX H100 (InfiniBand node pools)"): the GPU families its name or GPU tokens name.
-- Tokens must equal a family exactly; no substring matching.
create or replace view stg_fabric_by_family as
with tokens as (
    select
        f.*,
        unnest(regexp_split_to_array(
            upper(coalesce(f.gpu_name, '') || ' ' || f.instance_type), '[^A-Z0-9]+'
        )) as token
    from fabric_current as f
),
named as (
    select distinct t.* exclude (token), fam.gpu_family
    from tokens as t
    inner join stg_gpu_families as fam on t.token = upper(fam.gpu_family)
),
agreed as (
    -- only where every fact of the provider for that family says the same class,
    -- 'unknown' included: one fact in doubt leaves the family's fabric unknown
    select provider, gpu_family
    from named
    group by provider, gpu_family
    having count(distinct fabric_class) = 1 and min(fabric_class) <> 'unknown'
),
ranked as (
    select
        n.*,
        row_number() over (
            partition by n.provider, n.gpu_family order by n.observed_at desc, n.source
        ) as preference
    from named as n
    inner join agreed as a on n.provider = a.provider and n.gpu_family = a.gpu_family
)
select * exclude (preference)
from ranked
where preference = 1;

-- The GPU family of each current offer: from its canonical model, else from the tokens of
-- the name the provider gave (a bare "H100" is a family even when its form factor is not
-- known). Offers whose name names several families get none.
create or replace view stg_offer_families as
with tokens as (
    select
        run_id,
        instance_type,
        region,
        pricing_tier,
        coalesce(
            split_part(gpu_model, '-', 1),
            unnest(regexp_split_to_array(upper(coalesce(gpu_name, '')), '[^A-Z0-9]+'))
        ) as token
    from offers_current
)
select t.run_id, t.instance_type, t.region, t.pricing_tier, min(fam.gpu_family) as gpu_family
from tokens as t
inner join stg_gpu_families as fam on upper(t.token) = upper(fam.gpu_family)
group by t.run_id, t.instance_type, t.region, t.pricing_tier
having count(distinct fam.gpu_family) = 1;

-- The fabric of each current offer: the fact for its instance type if one exists,
-- else the provider's agreed fact for its GPU family; fabric_match says which.
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
        2 as priority, 'provider_gpu_family' as fabric_match,
        f.instance_type as fact_instance_type,
        f.* exclude (provider, source, instance_type, gpu_name, gpu_model, run_id, gpu_family)
    from offers_current as o
    inner join stg_offer_families as fam
        on o.run_id = fam.run_id
        and o.instance_type = fam.instance_type
        and o.region is not distinct from fam.region
        and o.pricing_tier = fam.pricing_tier
    inner join stg_fabric_by_family as f
        on o.provider = f.provider and fam.gpu_family = f.gpu_family
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
    f.multi_node,
    f.max_cluster_gpus,
    f.intra_node_link,
    f.fabric_fact_instance_type,
    f.fabric_source_url,
    f.fabric_evidence,
    f.fabric_obtained_by,
    f.fabric_observed_at
from offers_current as o
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
