-- Staging views: which run is each source's last good one.
create or replace view stg_last_good_runs as
with ranked as (
    select
        source,
        run_id,
        finished_at,
        row_number() over (
            partition by source order by finished_at desc, run_id desc
        ) as recency
    from scrape_runs
    where status = 'ok'
)
select source, run_id, finished_at
from ranked
where recency = 1;

-- Every spelling of a GPU that maps to a canonical model, normalised for matching.
create or replace view gpu_aliases as
with spellings as (
    select gpu_model, gpu_model as spelling from gpus
    union all
    select gpu_model, trim(unnest(string_split(aliases, '|'))) as spelling
    from gpus
    where aliases is not null
)
select distinct
    gpu_model,
    spelling,
    -- as fabricscope/scrapers/normalise.py match_key: brand words, spaces, hyphens, underscores removed
    lower(regexp_replace(
        regexp_replace(trim(spelling), '^((nvidia|amd|tesla|instinct)[\s_\-]+)+', '', 'i'),
        '[\s_\-]+', '', 'g'
    )) as match_key
from spellings
where spelling <> '';
