-- The latest calibration per provider, fabric class and collective.
create or replace view calibration_current as
with ranked as (
    select
        * exclude (raw_text),
        row_number() over (
            partition by provider, fabric_class, collective
            order by uploaded_at desc, calibration_id desc
        ) as recency
    from fabric_calibrations
)
select * exclude (recency)
from ranked
where recency = 1;
