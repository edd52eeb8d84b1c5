-- How many runs ended ok: whether a warehouse holds data yet (fabricscope/ops/refresh.py).
select count(*) as n from scrape_runs where status = 'ok'
