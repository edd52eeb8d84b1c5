-- Tiers, price bases and provenance come from their enums (fabricscope/warehouse/models.py).
select run_id, provider, instance_type, pricing_tier, price_basis, obtained_by
from checked_offers
where pricing_tier not in (
        'on_demand', 'spot', 'dynamic', 'reserved_1m', 'reserved_3m', 'reserved_6m',
        'reserved_1y', 'reserved_2y', 'reserved_3y'
    )
   or price_basis not in ('per_instance', 'per_gpu', 'gpu_only_host_extra')
   or obtained_by not in ('scraped', 'api', 'catalog', 'curated');
