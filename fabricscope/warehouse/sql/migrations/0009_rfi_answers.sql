-- Providers' answers to the transparency questionnaire (fabricscope answers import, the
-- Providers page): one row per answer to one question, as the buyer entered it
-- (fabricscope/warehouse/models.py RfiAnswer). Append-only and the buyer's own like quotes: no
-- refresh writes it, each import is one snapshot of kind 'answers' (0008 allowed the kind), the
-- same answer entered twice is stored once. The latest answer per provider and question is
-- current (rfi_answers_current, views/045_rfi_answers.sql).
create table rfi_answers (
    answer_id varchar primary key,
    provider varchar not null,
    question_id varchar not null,
    value varchar not null check (value in ('yes', 'partial', 'no')),
    answer varchar not null,
    evidence_url varchar,
    attachment varchar,
    answered_on date not null,
    answered_by varchar not null,
    entered_by varchar not null,
    questionnaire_version varchar not null,
    entered_at timestamptz not null,
    file_name varchar,
    line integer,
    content_sha256 varchar not null unique,
    snapshot_id bigint not null
);
