-- The materialised rankings become whole answers the app can serve (fabricscope/rank/ranking.py
-- materialised_result): each ranking's request and the code that ranked it, every column a
-- ranked row shows, and the offers each ranking left out with the reason.

-- One row per materialised ranking: the exact request ranked (RankRequest as JSON) and the
-- fingerprint of the code and reference files that ranked it (ranking.ranking_version); a
-- ranking is served only to the same request, by the same code, over the same snapshot.
create table estimate_rankings (
    snapshot_id bigint not null,
    based_on_snapshot bigint not null,
    computed_at timestamptz not null,
    workload varchar not null,
    gpus_requested varchar not null,
    pricing_tier varchar not null,
    objective varchar not null,
    request_json varchar not null,
    ranking_version varchar not null,
    offers integer not null check (offers >= 0),
    excluded integer not null check (excluded >= 0),
    profiles_estimated integer not null check (profiles_estimated >= 0),
    primary key (snapshot_id, request_json)
);

-- every column of a ranked row that 0003 did not hold (fabricscope/rank/ranking.py RANKED_COLUMNS)
alter table estimates add column request_json varchar;
alter table estimates add column sold_by varchar;
alter table estimates add column sold_and_run_by varchar;
alter table estimates add column offer_label varchar;
alter table estimates add column regions varchar;
alter table estimates add column region_count integer;
alter table estimates add column fabric_gbps_costed double;
alter table estimates add column multi_node boolean;
alter table estimates add column multi_node_reason varchar;
alter table estimates add column fabric_source_grade varchar;
alter table estimates add column fabric_source_date timestamp;
alter table estimates add column fabric_evidence varchar;
alter table estimates add column price_published_by varchar;
alter table estimates add column score double;

-- the offers each materialised ranking left out, and why (fabricscope/rank/ranking.py EXCLUDED_COLUMNS)
create table estimate_exclusions (
    snapshot_id bigint not null,
    request_json varchar not null,
    provider varchar,
    sold_by varchar,
    offer_label varchar,
    gpu_model varchar,
    gpus integer,
    reason varchar not null,
    instance_type varchar,
    region varchar,
    pricing_tier varchar,
    price_usd_per_gpu_hour double,
    price_source_url varchar,
    offer_key varchar
);
