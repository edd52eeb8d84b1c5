-- The Reference page's fabric classes (fabricscope/app/pages/reference.py).
select * from fabric_classes order by fabric_class
