-- Fabric classes from the enum, known classes described in fabric_classes, evidence present.
select run_id, provider, instance_type, fabric_class
from checked_fabric as f
where fabric_class not in (
        'infiniband', 'spectrum_x', 'roce', 'efa', 'tcpx', 'ethernet',
        'ultra_ethernet', 'none', 'unknown'
    )
   or (fabric_class <> 'unknown'
       and not exists (select 1 from fabric_classes as c where c.fabric_class = f.fabric_class))
   or trim(evidence) = ''
   or trim(source_url) = ''
   or fabric_gbps_per_node <= 0
   or fabric_gbps_per_gpu <= 0;
