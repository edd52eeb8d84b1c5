-- Every published price is a positive, finite number.
select run_id, provider, instance_type, price, price_usd_per_hour, price_usd_per_gpu_hour
from checked_offers
where not (
    price > 0 and isfinite(price)
    and price_usd_per_hour > 0 and isfinite(price_usd_per_hour)
    and price_usd_per_gpu_hour > 0 and isfinite(price_usd_per_gpu_hour)
);
