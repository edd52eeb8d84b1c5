-- Quotes a buyer entered (fabricscope quote add / import, the Quotes page): private prices a
-- provider or reseller offered, with their terms (fabricscope/warehouse/models.py Quote).
-- Append-only and the buyer's own: no refresh or materialisation writes it, each import is one
-- snapshot of kind 'quotes', and the same quote entered twice is stored once (content_sha256).
-- quote_offers (views/025_quotes.sql) ranks them beside the list offers.

-- snapshots.kind gains 'quotes' (and 'answers', for providers' answers to the questionnaire):
-- DuckDB cannot alter a check constraint, so the table is rebuilt with the same rows.
create table snapshots_next (
    snapshot_id bigint primary key,
    published_at timestamptz not null,
    kind varchar not null check (
        kind in ('run', 'reference', 'migration', 'calibration', 'estimates', 'quotes', 'answers')
    ),
    run_id varchar,
    snapshot_hash varchar not null,
    note varchar
);
insert into snapshots_next select * from snapshots;
drop table snapshots;
alter table snapshots_next rename to snapshots;

create table quotes (
    quote_id varchar primary key,
    provider varchar not null,
    sold_by varchar,
    configuration varchar not null,
    region varchar,
    gpu_model varchar not null,
    gpus_per_node integer not null check (gpus_per_node > 0),
    gpus integer check (gpus > 0),
    price_usd double not null check (price_usd > 0),
    price_per varchar not null check (price_per in ('gpu_hour', 'node_hour')),
    price_usd_per_gpu_hour double not null check (price_usd_per_gpu_hour > 0),
    pricing_tier varchar not null,
    term_months integer check (term_months > 0),
    min_commit_gpus integer check (min_commit_gpus > 0),
    min_commit_months double check (min_commit_months > 0),
    booked_from date,
    booked_to date,
    available_from date,
    valid_until date,
    fabric_class varchar,
    fabric_gbps_per_gpu double check (fabric_gbps_per_gpu > 0),
    multi_node boolean,
    fabric_note varchar,
    quoted_at date not null,
    source varchar not null,
    source_url varchar,
    notes varchar,
    entered_by varchar not null,
    entered_at timestamptz not null,
    file_name varchar,
    line integer,
    content_sha256 varchar not null unique,
    snapshot_id bigint not null
);

-- a ranked quote keeps its id and the last day it holds (fabricscope/rank/estimators.py
-- PRICE_COLUMNS)
alter table estimates add column quote_id varchar;
alter table estimates add column quote_valid_until date;
