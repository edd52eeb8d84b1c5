-- Each current offer's price, the reference the anomaly check compares a new run with (fabricscope/scrapers/pipelines/anomaly.py).
select source, provider, instance_type, coalesce(region, '') as region, pricing_tier,
       median(price_usd_per_gpu_hour) as price
from offers_current
group by all
