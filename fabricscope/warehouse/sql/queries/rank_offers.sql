-- Every current offer with its fabric and GPU, as the ranking reads it (fabricscope/rank/ranking.py).
select * from instance_catalog
