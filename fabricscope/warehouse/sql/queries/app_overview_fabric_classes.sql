-- The home page's fabric classes (fabricscope/app/pages/overview.py).
select display_name, rdma, lossless, latency_us, eta_small_scale, phi_floor, is_prior,
       description
from fabric_classes
order by fabric_class
