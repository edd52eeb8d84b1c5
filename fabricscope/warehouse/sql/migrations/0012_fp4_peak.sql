-- A GPU's dense FP4 tensor peak (issue 36; fabricscope/warehouse/reference/gpus.csv
-- fp4_dense_tflops, read by the serving model's FP4 weights). The reference loader requires
-- the table's columns in the CSV's order, and the column sits beside the other dense peaks,
-- so the table is rebuilt with it after fp8_dense_tflops instead of having it appended. Its
-- rows are kept (the column NULL) until the reference load replaces them from the CSV.
create table gpus_with_fp4 (
    gpu_model varchar primary key,
    aliases varchar,
    vendor varchar not null,
    form_factor varchar,
    memory_gb double,
    hbm_tbps double,
    bf16_dense_tflops double,
    fp8_dense_tflops double,
    fp4_dense_tflops double,
    scaleup_link varchar,
    scaleup_gbps_per_gpu double,
    tdp_w double,
    source varchar not null
);

insert into gpus_with_fp4
select
    gpu_model,
    aliases,
    vendor,
    form_factor,
    memory_gb,
    hbm_tbps,
    bf16_dense_tflops,
    fp8_dense_tflops,
    null,
    scaleup_link,
    scaleup_gbps_per_gpu,
    tdp_w,
    source
from gpus;

drop table gpus;

alter table gpus_with_fp4 rename to gpus;
