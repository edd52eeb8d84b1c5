-- What the SQL data tests check. By default everything ever published; while a run is
-- published, the writer shadows these with temporary views holding that run's rows only
-- (every earlier row passed the tests when it was published), so a publish costs what the
-- run brings, not what the history holds.
create or replace view checked_offers as
select * from offers_history;

create or replace view checked_fabric as
select * from fabric_history;
