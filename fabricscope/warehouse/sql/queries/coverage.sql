-- What the ranking can stand on: shares of offers with a GPU and a fabric (fabricscope/ops/status.py).
select * from data_coverage
