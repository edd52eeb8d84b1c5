-- The home page's counts (fabricscope/app/pages/overview.py).
select
    (select count(*) from offers_current) as offers,
    (select count(distinct provider) from offers_current) as priced_providers,
    (select count(*) from fabric_current) as fabric_facts,
    (select count(*) from gpus) as gpu_models,
    (select count(*) from providers) as providers,
    (select count(*) from fabric_classes) as fabric_classes
