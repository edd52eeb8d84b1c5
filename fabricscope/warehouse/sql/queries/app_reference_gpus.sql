-- The Reference page's GPUs (fabricscope/app/pages/reference.py).
select * from gpus order by vendor, gpu_model
