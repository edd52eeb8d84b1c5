-- Every current offer with its fabric and GPU, and every quote the buyer entered, as the ranking reads them (fabricscope/rank/ranking.py).
select * from instance_catalog
union all by name
select * from quote_offers
