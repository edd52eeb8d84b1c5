"""SQL console: read-only queries over the warehouse, with the CLI's limits and refusals."""

from __future__ import annotations

import streamlit as st

from fabricscope.app.components import settings_or_stop, snapshot_or_setup
from fabricscope.warehouse.query import QueryFailed, QueryRefused, run_user_query

EXAMPLES = {
    "Current offers, cheapest per GPU-hour first": (
        "select provider, instance_type, gpu_model, gpu_count, pricing_tier,\n"
        "       price_usd_per_gpu_hour, fabric_class\n"
        "from instance_catalog\norder by price_usd_per_gpu_hour\nlimit 50"
    ),
    "Freshness of every source": "select * from source_freshness order by source",
    "GPUs by BF16 throughput": (
        "select gpu_model, vendor, memory_gb, bf16_dense_tflops, fp8_dense_tflops,\n"
        "       fp4_dense_tflops\n"
        "from gpus\norder by bf16_dense_tflops desc nulls last"
    ),
    "Fabric classes and their scale behaviour": (
        "select fabric_class, latency_us, eta_small_scale, knee_nodes, kappa_per_doubling,\n"
        "       phi_floor, is_prior\nfrom fabric_classes"
    ),
    "Tables and views": "show tables",
}

path, _, limits = settings_or_stop()
snapshot = snapshot_or_setup(path)
st.title("SQL")
st.caption(
    f"Read-only over snapshot {snapshot.snapshot_id}. One SELECT at a time; no files, URLs, "
    f"extensions or settings; at most {limits.max_rows:,} rows and {limits.timeout_s:g} s. "
    "The same console is `fabricscope sql` on the command line."
)

example = st.selectbox("Example queries", list(EXAMPLES), index=0)
query = st.text_area("Query", value=EXAMPLES[example], height=160, key="sql_query")
if st.button("Run", type="primary"):
    try:
        result = run_user_query(path, query, limits)
    except QueryRefused as exc:
        st.error(f"Refused: {exc}")
    except QueryFailed as exc:
        st.error(f"Query failed: {exc}")
    else:
        frame = result.to_pandas()
        if result.truncated:
            st.warning(f"Showing the first {len(frame):,} rows (row cap). Add a LIMIT or a filter.")
        st.dataframe(frame, hide_index=True, width="stretch")
        st.download_button(
            "Download CSV",
            frame.to_csv(index=False).encode(),
            file_name="fabricscope-query.csv",
            mime="text/csv",
        )
