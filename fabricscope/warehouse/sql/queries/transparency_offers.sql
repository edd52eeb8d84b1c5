-- The price evidence the transparency rules read; the columns are PRICE_EVIDENCE_COLUMNS (fabricscope/evidence/transparency.py).
select provider,
       source,
       instance_type,
       region,
       pricing_tier,
       price_basis,
       price,
       currency,
       source_url,
       obtained_by,
       observed_at
from offers_current
