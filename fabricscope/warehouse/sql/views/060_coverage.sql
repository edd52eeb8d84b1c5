-- How much of the catalog the ranking can stand on: one row of coverage figures, and the
-- offers that could form a cluster but have no fabric class, each with why. "Could form a
-- cluster": sold with 8 or more GPUs per instance, or stated multi-node by a source.
create or replace view stg_cluster_offers as
select *
from instance_catalog
where gpu_count >= 8 or multi_node;

create or replace view data_coverage as
select
    (select count(*) from instance_catalog) as offers,
    (select count(distinct provider) from instance_catalog) as providers_with_offers,
    (select count(*) from instance_catalog where gpu_model is not null) as offers_gpu_identified,
    round(
        (select count(*) from instance_catalog where gpu_model is not null)
        / nullif((select count(*) from instance_catalog), 0),
        4
    ) as share_gpu_identified,
    (select count(*) from stg_cluster_offers) as cluster_offers,
    (select count(*) from stg_cluster_offers where fabric_class is not null)
        as cluster_offers_with_fabric,
    round(
        (select count(*) from stg_cluster_offers where fabric_class is not null)
        / nullif((select count(*) from stg_cluster_offers), 0),
        4
    ) as share_cluster_offers_with_fabric,
    (select count(*) from instance_catalog where multi_node is not null)
        as offers_multi_node_known;

-- The cluster-capable offers without a fabric class, one row per provider and instance
-- type, with why: what the catalog knows of it, so a reader knows what to ask or source.
create or replace view fabric_coverage_gaps as
select
    provider,
    instance_type,
    gpu_model,
    gpu_count,
    count(*) as offers,
    string_agg(distinct source, ', ' order by source) as sources,
    case
        when bool_or(fabric_source_url is not null)
            then 'a fact exists but states the class as unknown'
        when any_value(provider_kind) = 'broker'
            then 'resold by a broker: the underlying cloud''s fabric for this type is not sourced'
        when any_value(provider_kind) = 'marketplace'
            then 'a marketplace host: no cluster fabric is stated'
        else 'no source states the fabric of this instance type'
    end as why
from stg_cluster_offers
where fabric_class is null
group by provider, instance_type, gpu_model, gpu_count
order by offers desc, provider, instance_type;
