-- Core schema: the run ledger, append-only history, quarantine, snapshots, reference tables.
-- Migrations are immutable once released: change the schema with a new numbered file.

-- One row per scrape run of one source, whatever its outcome.
create table scrape_runs (
    run_id varchar primary key,
    source varchar not null,
    mode varchar not null check (mode in ('live', 'replay')),
    started_at timestamptz not null,
    finished_at timestamptz,
    status varchar not null
        check (status in ('running', 'ok', 'failed', 'quarantined', 'aborted')),
    items_scraped integer not null default 0 check (items_scraped >= 0),
    items_published integer not null default 0 check (items_published >= 0),
    items_dropped integer not null default 0 check (items_dropped >= 0),
    dropped_by_reason json,
    items_quarantined integer not null default 0 check (items_quarantined >= 0),
    error_text varchar,
    scrapy_stats json,
    -- sha256 over the rows this run published (offers and fabric facts); null if none
    content_hash varchar,
    snapshot_id bigint not null
);

-- Offers as observed. Append-only: rows are inserted by a publish, never updated.
create table offers_history (
    run_id varchar not null,
    provider varchar not null,
    source varchar not null,
    instance_type varchar not null,
    region varchar,
    gpu_name varchar,
    gpu_model varchar,
    gpu_count integer not null,
    gpu_memory_gb double,
    vcpus double,
    ram_gb double,
    pricing_tier varchar not null,
    price_basis varchar not null,
    price double not null,
    currency varchar not null,
    price_usd_per_hour double not null,
    price_usd_per_gpu_hour double not null,
    availability varchar,
    source_url varchar not null,
    obtained_by varchar not null,
    observed_at timestamptz not null
);

-- Fabric facts as observed, each with its evidence. Append-only.
create table fabric_history (
    run_id varchar not null,
    provider varchar not null,
    source varchar not null,
    instance_type varchar not null,
    gpu_name varchar,
    gpu_model varchar,
    fabric_class varchar not null,
    fabric_product varchar,
    fabric_gbps_per_node double,
    fabric_gbps_per_gpu double,
    rdma boolean,
    gpudirect_rdma boolean,
    multi_node boolean,
    max_cluster_gpus integer,
    topology varchar,
    intra_node_link varchar,
    published_benchmark_url varchar,
    source_url varchar not null,
    evidence varchar not null,
    source_date date,
    obtained_by varchar not null,
    observed_at timestamptz not null
);

-- Items a run refused to publish, kept with the reason so nothing is silently lost.
create table quarantined_items (
    run_id varchar not null,
    source varchar not null,
    item_kind varchar not null,
    reason varchar not null,
    raw json not null,
    observed_at timestamptz not null
);

-- One row per published snapshot (each publish makes exactly one).
create table snapshots (
    snapshot_id bigint primary key,
    published_at timestamptz not null,
    kind varchar not null check (kind in ('run', 'reference', 'migration', 'calibration')),
    run_id varchar,
    -- sha256 over every ok run's content hash and the reference tables' hash
    snapshot_hash varchar not null,
    note varchar
);

-- Reference data, replaced as a whole from the versioned CSVs in fabricscope/warehouse/reference/.
create table gpus (
    gpu_model varchar primary key,
    aliases varchar,
    vendor varchar not null,
    form_factor varchar,
    memory_gb double,
    hbm_tbps double,
    bf16_dense_tflops double,
    fp8_dense_tflops double,
    scaleup_link varchar,
    scaleup_gbps_per_gpu double,
    tdp_w double,
    source varchar not null
);

create table fabric_classes (
    fabric_class varchar primary key,
    display_name varchar not null,
    rdma boolean,
    lossless boolean,
    latency_us double,
    alpha_multiplier double,
    eta_small_scale double,
    knee_nodes double,
    kappa_per_doubling double,
    phi_floor double,
    is_prior boolean not null,
    description varchar,
    source varchar not null
);

create table providers (
    provider varchar primary key,
    display_name varchar not null,
    homepage_url varchar,
    pricing_url varchar,
    docs_url varchar,
    price_api_url varchar,
    source varchar not null
);

create table fx_rates (
    currency varchar primary key,
    usd_per_unit double,
    as_of date,
    source varchar not null
);

-- Which reference CSV content is loaded (sha256 over the loaded tables).
create table reference_loads (
    snapshot_id bigint not null,
    loaded_at timestamptz not null,
    content_hash varchar not null
);
