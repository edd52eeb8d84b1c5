-- Offers gain zones (how many availability zones of the region sell it: catalogs that list
-- each zone are collapsed to one offer per region); fabric facts gain source_grade
-- (provider | measured | third_party: how far the source can be trusted). Rows observed
-- before this migration keep NULL in both.
alter table offers_history add column zones integer;
alter table fabric_history add column source_grade varchar;

-- A run's content hash covers every column of its rows (fabricscope/warehouse/db.py run_content_hash),
-- so the new NULL columns change it: recompute each good run's hash the same way, so
-- `fabricscope status --verify` still holds for everything published before.
update scrape_runs as r
set content_hash = sha256(
    'offers:' || (
        select sha256(coalesce(string_agg(h, '' order by h), ''))
        from (select md5(cast(t as varchar)) as h from offers_history as t where t.run_id = r.run_id)
    )
    || chr(10) || 'fabric:' || (
        select sha256(coalesce(string_agg(h, '' order by h), ''))
        from (select md5(cast(t as varchar)) as h from fabric_history as t where t.run_id = r.run_id)
    )
)
where r.status = 'ok';

-- providers.kind: 'marketplace' (hosts rented from third parties, e.g. Vast.ai), 'broker'
-- (resells other clouds' instances) or NULL (not classified). A marketplace box is not a
-- cluster unless a source says so (docs/RANKING.md).
alter table providers add column kind varchar;

-- Instance types whose GPU the provider's own docs state (AWS p4d.24xlarge = 8 x A100 SXM
-- 40GB): the GPU of an offer whose published name alone is ambiguous. Exact names only.
create table instance_gpus (
    provider varchar not null,
    instance_type varchar not null,
    gpu_model varchar not null,
    gpu_count integer,
    source varchar not null,
    primary key (provider, instance_type)
);

-- Offers whose fabric is stated for a product line, not per instance type: each row maps an
-- offer's instance type to the fabric fact's instance_type (the product line), with the
-- source that says the instance type belongs to that line. Never inferred from a GPU family.
create table fabric_product_lines (
    provider varchar not null,
    instance_type varchar not null,
    product_line varchar not null,
    source varchar not null,
    primary key (provider, instance_type)
);
