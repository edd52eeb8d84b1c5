-- The current answer of each provider to each question: the one it gave last (then the one
-- entered last), from rfi_answers (migrations/0009_rfi_answers.sql).
create or replace view rfi_answers_current as
with ranked as (
    select
        *,
        row_number() over (
            partition by provider, question_id
            order by answered_on desc, entered_at desc, answer_id desc
        ) as recency
    from rfi_answers
)
select * exclude (recency, snapshot_id)
from ranked
where recency = 1;
