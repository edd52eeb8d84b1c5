"""Uploading nccl-tests output: the fit, the comparison, storing it, and bad uploads."""

from __future__ import annotations

import pytest

from fabricscope.app.calibration_view import class_comparison, fit_upload
from fabricscope.evidence.calibrate import stored_all_reduce
from fabricscope.model.calibration import CalibrationError
from fabricscope.warehouse.db import current_snapshot
from tests.helpers import ROOT
from tests.ui.apptest import open_page, text_of

CALIBRATE = "pages/calibrate.py"
IB_RUN = ROOT / "fixtures" / "nccl_tests" / "infiniband_2n_16g_all_reduce.txt"
EFA_RUN = ROOT / "fixtures" / "nccl_tests" / "efa-p5_2n_16g_all_reduce.txt"


def test_a_bad_upload_shows_the_parser_message_and_stores_nothing(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    before = current_snapshot(warehouse_path)
    app = open_page(CALIBRATE)
    app.file_uploader(key="calibrate_file").upload("run.log", b"NCCL INFO hello\nnot a table\n")
    app.text_input(key="calibrate_provider").input("lambda").run()
    assert not app.exception
    errors = [e.value for e in app.error]
    assert errors and "run.log: line 2: no nccl-tests result table found" in errors[0]
    assert not [b for b in app.button if b.key == "calibrate_store"], "no way to store it"
    assert current_snapshot(warehouse_path) == before


def test_a_good_upload_is_fitted_compared_and_stored(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    app = open_page(CALIBRATE)
    app.file_uploader(key="calibrate_file").upload("ib.txt", IB_RUN.read_bytes(), "text/plain")
    app.text_input(key="calibrate_provider").input("lambda")
    app.number_input(key="calibrate_nodes").set_value(2).run()
    assert not app.exception and not app.error
    comparison = next(f.value for f in app.dataframe if "class default" in f.value.columns)
    assert list(comparison["quantity"])[2] == "bus bandwidth over 2 nodes (GB/s)"
    parsed = next(f.value for f in app.dataframe if "size_bytes" in f.value.columns)
    assert parsed["size_bytes"].iloc[0] == 8
    before = current_snapshot(warehouse_path)
    app.button(key="calibrate_store").click().run()
    assert not app.exception and not app.error
    assert "Stored calibration lambda-" in text_of(app)
    assert current_snapshot(warehouse_path).snapshot_id > before.snapshot_id
    stored = stored_all_reduce(warehouse_path)
    assert stored[("lambda", "infiniband")]["n_nodes"] == 2
    assert [f for f in app.dataframe if "calibration_id" in f.value.columns], "listed as used"


def test_the_upload_functions_name_what_is_wrong():
    with pytest.raises(CalibrationError, match=r"empty\.txt is empty"):
        fit_upload(b"  \n", "empty.txt", "lambda", "infiniband")
    with pytest.raises(CalibrationError, match="say which provider"):
        fit_upload(IB_RUN.read_bytes(), "ib.txt", " ", "infiniband")
    upload = fit_upload(IB_RUN.read_bytes(), "ib.txt", "lambda", "infiniband", nodes=2)
    assert upload.used_by_model
    table = class_comparison(upload, 400.0).set_index("quantity")
    share = table.loc["share of NIC line rate"]
    # 470.6 GB/s over 8 x 400 Gb/s NICs is above line rate: the model caps it at 1
    assert share["measured"] == pytest.approx(470.588 / 400, rel=1e-3)
    assert share["class default"] == pytest.approx(0.9) and share["model uses"] == 1.0
    # the reference run itself: its latency is InfiniBand's, multiplier 1
    step = table.loc["network step latency (µs)"]
    assert step["measured"] == pytest.approx(9.6, rel=0.01) and step["class default"] == 9.6
    assert table.loc["all-reduce latency alpha (µs)", "model uses"] == pytest.approx(30.5, 0.01)
    efa = fit_upload(EFA_RUN.read_bytes(), "p5.txt", "aws", "efa", nodes=2)
    step = class_comparison(efa, 400.0).set_index("quantity").loc["network step latency (µs)"]
    assert step["class default"] == pytest.approx(19.2)  # the prior: 2 x InfiniBand's
    assert step["model uses"] == step["measured"] == pytest.approx(9.6 * 71.1 / 30.5, rel=0.01)
    no_nodes = fit_upload(IB_RUN.read_bytes(), "ib.txt", "lambda", "infiniband")
    assert not no_nodes.used_by_model
    table = class_comparison(no_nodes, 400.0).set_index("quantity")
    assert list(table.index) == ["all-reduce latency alpha (µs)", "network step latency (µs)"]
    assert table.loc["network step latency (µs)", "model uses"] == 9.6  # the class's
