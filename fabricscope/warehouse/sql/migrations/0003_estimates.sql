-- Materialised rankings: each preset workload ranked over the current offers after a refresh
-- (fabricscope/rank/ranking.py), so analysts can ask "cheapest provider for Llama 3 70B on 512 GPUs"
-- in SQL. One publish of kind 'estimates' per materialisation; estimates_current (a view)
-- holds the latest one. based_on_snapshot is the snapshot whose offers were ranked.

-- snapshots.kind gains 'estimates': DuckDB cannot alter a check constraint, so the table is
-- rebuilt with the same rows.
create table snapshots_next (
    snapshot_id bigint primary key,
    published_at timestamptz not null,
    kind varchar not null
        check (kind in ('run', 'reference', 'migration', 'calibration', 'estimates')),
    run_id varchar,
    snapshot_hash varchar not null,
    note varchar
);
insert into snapshots_next select * from snapshots;
drop table snapshots;
alter table snapshots_next rename to snapshots;

create table estimates (
    snapshot_id bigint not null,
    based_on_snapshot bigint not null,
    computed_at timestamptz not null,
    workload varchar not null,
    workload_name varchar not null,
    gpus_requested varchar not null,
    pricing_tier varchar not null,
    objective varchar not null,
    rank integer not null,
    offer_key varchar not null,
    provider varchar not null,
    instance_type varchar not null,
    region varchar,
    gpu_model varchar not null,
    gpus integer not null,
    gpus_per_node integer not null,
    nodes integer not null,
    time_to_train_h double not null,
    time_to_train_h_low double not null,
    cost_usd double not null,
    cost_usd_low double not null,
    usd_per_million_tokens double not null,
    mfu double,
    verdict varchar,
    comm_fraction_exposed double,
    fabric_share_of_comm double,
    layout varchar,
    memory_gb_per_gpu double,
    fabric_class varchar,
    fabric_estimated_as varchar,
    fabric_range boolean not null,
    fabric_gbps_per_gpu double,
    fabric_source_url varchar,
    fabric_observed_at timestamptz,
    price_usd_per_gpu_hour double not null,
    price_basis varchar,
    price_source_url varchar,
    price_observed_at timestamptz,
    price_obtained_by varchar,
    transparency_score double,
    pareto boolean not null,
    step_time_s double,
    compute_s double,
    tp_comm_s double,
    pp_comm_s double,
    dp_comm_exposed_s double,
    ep_comm_s double,
    bubble_s double,
    optimizer_s double,
    failure_overhead_s double,
    goodput double,
    notes varchar
);
