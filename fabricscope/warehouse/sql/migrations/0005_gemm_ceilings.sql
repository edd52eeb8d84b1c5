-- Measured matmul ceilings per GPU and precision (fabricscope/warehouse/reference/gemm_ceilings.csv): the
-- highest dense matmul throughput a benchmark reached, which the scaling model reads as how
-- much of the datasheet peak a GPU's GEMMs can reach. One row per GPU model and precision.
create table gemm_ceilings (
    gpu_model varchar not null,
    precision varchar not null check (precision in ('bf16', 'fp8')),
    mamf_tflops double not null check (mamf_tflops > 0),
    source varchar not null,
    primary key (gpu_model, precision)
);
