-- The providers the transparency rules score; the columns are PROVIDER_COLUMNS (fabricscope/evidence/transparency.py).
select provider,
       display_name
from providers
