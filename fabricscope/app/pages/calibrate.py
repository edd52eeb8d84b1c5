"""Calibrate: nccl-tests output measured on a provider replaces its fabric class's default."""

from __future__ import annotations

import streamlit as st

from fabricscope.app.calibration_view import (
    CALIBRATION_CLASSES,
    COLLECTIVES,
    Upload,
    class_comparison,
    fit_summary,
    fit_upload,
    parsed_table,
    store_upload,
)
from fabricscope.app.components import read_snapshot, settings_or_stop, status_caption
from fabricscope.config import ConfigError
from fabricscope.evidence.calibrate import ALL_REDUCE_SQL
from fabricscope.model.calibration import CalibrationError
from fabricscope.ops.status import FRESHNESS_SQL
from fabricscope.warehouse.db import WarehouseError

AUTO = "(as the output says)"
STORED = "calibrate_stored"

path, stale_after_hours, _ = settings_or_stop()
snapshot, frames = read_snapshot(path, {"freshness": FRESHNESS_SQL, "stored": ALL_REDUCE_SQL})
st.title("Calibrate a fabric")
status_caption(snapshot, frames["freshness"], stale_after_hours)
st.markdown(
    "Upload the output of an nccl-tests run (`all_reduce_perf -b 8 -e 8G -f 2 -g 1` over two "
    "or more nodes, as `mpirun` or `srun` prints it). Its fitted bus bandwidth replaces the "
    "fabric class's default for that provider's offers of that class in every ranking."
)
if STORED in st.session_state:
    st.success(st.session_state.pop(STORED))

upload_file = st.file_uploader("nccl-tests output", key="calibrate_file")
left, middle, right = st.columns(3)
provider = left.text_input("Provider it was measured on", key="calibrate_provider")
fabric_class = middle.selectbox("Its fabric class", CALIBRATION_CLASSES, key="calibrate_class")
collective = right.selectbox("Collective", [AUTO, *COLLECTIVES], key="calibrate_collective")
left, middle, right = st.columns(3)
nodes = left.number_input(
    "Nodes in the run",
    min_value=1,
    value=None,
    step=1,
    key="calibrate_nodes",
    help="Needed when the output lists no host names (no '#  Rank' lines).",
)
nic = middle.number_input(
    "NIC Gb/s per GPU (for the comparison)",
    min_value=1.0,
    value=400.0,
    step=50.0,
    key="calibrate_nic",
)
note = right.text_input("Note (where and how it was measured)", key="calibrate_note")

if upload_file is None:
    st.info("Upload a file to see its table and fit. Nothing is stored until you say so.")
else:
    upload: Upload | None
    try:
        upload = fit_upload(
            upload_file.getvalue(),
            upload_file.name,
            provider,
            fabric_class,
            None if collective == AUTO else collective,
            int(nodes) if nodes else None,
        )
    except CalibrationError as exc:
        st.error(f"This upload cannot be used: {exc}")
        upload = None
    if upload is not None:
        st.subheader("Fit")
        left, right = st.columns(2)
        left.dataframe(fit_summary(upload), hide_index=True, width="stretch")
        right.dataframe(class_comparison(upload, nic), hide_index=True, width="stretch")
        if not upload.used_by_model:
            st.warning(
                "The model uses multi-node all-reduce runs with a known node count; this one "
                "can be stored for the record but will not change rankings."
            )
        st.subheader("Parsed table")
        st.dataframe(parsed_table(upload.calibration.result), hide_index=True, width="stretch")
        if st.button("Store this calibration", type="primary", key="calibrate_store"):
            try:
                store_upload(path, upload, note)
            except (ConfigError, WarehouseError) as exc:
                st.error(f"Not stored: {exc}")
            else:
                st.session_state[STORED] = (
                    f"Stored calibration {upload.calibration.calibration_id} for "
                    f"{upload.calibration.provider} ({upload.calibration.fabric_class}); "
                    "rankings from the new snapshot use it."
                )
                st.rerun()

st.subheader("Calibrations the model uses")
if frames["stored"].empty:
    st.caption("None yet: every fabric is estimated with its class default.")
else:
    st.dataframe(frames["stored"], hide_index=True, width="stretch")
