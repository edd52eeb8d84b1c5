-- The whole cost of a job (issue 35 item 5; fabricscope/rank/costs.py): what each provider
-- states its storage, egress and support cost (reference/provider_costs.csv, each with its
-- source; empty is unknown, never zero), and the stored rankings' cost breakdown.
create table provider_costs (
    provider varchar primary key,
    storage_usd_per_tb_month double check (storage_usd_per_tb_month >= 0),
    storage_product varchar,
    egress_usd_per_gb double check (egress_usd_per_gb >= 0),
    egress_note varchar,
    support_uplift_pct double check (support_uplift_pct >= 0 and support_uplift_pct <= 100),
    support_note varchar,
    source varchar not null,
    observed_on date not null
);

-- each ranked row's whole cost and its parts (fabricscope/rank/estimators.py COST_COLUMNS)
alter table estimates add column total_cost_usd double;
alter table estimates add column total_cost_usd_low double;
alter table estimates add column gpu_cost_usd double;
alter table estimates add column commitment_usd double;
alter table estimates add column storage_usd double;
alter table estimates add column egress_usd double;
alter table estimates add column support_usd double;
alter table estimates add column costs_unknown varchar;
alter table estimates add column cost_basis varchar;
