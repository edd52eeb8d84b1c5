-- Measured collective performance uploaded by people (nccl-tests output), per provider.
-- Append-only; the latest per provider, fabric class and collective is current.
create table fabric_calibrations (
    calibration_id varchar primary key,
    provider varchar not null,
    fabric_class varchar not null,
    collective varchar not null,
    n_ranks integer,
    n_nodes integer,
    gpus_per_node integer,
    alpha_us double,
    busbw_gbytes_s double not null check (busbw_gbytes_s > 0),
    fitted_from_bytes bigint,
    fitted_to_bytes bigint,
    file_name varchar not null,
    file_sha256 varchar not null,
    raw_text varchar not null,
    note varchar,
    uploaded_at timestamptz not null,
    snapshot_id bigint not null
);
