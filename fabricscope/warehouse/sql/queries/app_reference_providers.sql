-- The Reference page's providers (fabricscope/app/pages/reference.py).
select * from providers order by display_name
