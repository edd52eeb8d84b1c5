-- Every reference row says where it comes from.
select 'gpus' as in_table, gpu_model as row_key from gpus where trim(coalesce(source, '')) = ''
union all
select 'fabric_classes', fabric_class from fabric_classes where trim(coalesce(source, '')) = ''
union all
select 'providers', provider from providers where trim(coalesce(source, '')) = ''
union all
select 'fx_rates', currency from fx_rates where trim(coalesce(source, '')) = ''
union all
select 'instance_gpus', provider || '/' || instance_type from instance_gpus
where trim(coalesce(source, '')) = ''
union all
select 'fabric_product_lines', provider || '/' || instance_type from fabric_product_lines
where trim(coalesce(source, '')) = '';
