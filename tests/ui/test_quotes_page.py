"""The Quotes page: a quote entered in the form is stored and ranked, a bad one names its field,
a file's refused rows are listed with their line and field before its good ones are stored."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from fabricscope.procurement import quotes
from fabricscope.warehouse.db import current_snapshot
from fabricscope.warehouse.models import QUOTE_FIELDS
from tests.helpers import AS_OF
from tests.ui.apptest import captured_downloads, download_data, open_page, text_of

QUOTES = "pages/quotes.py"
RANK = "pages/rank.py"
HEADER = "provider,configuration,gpu_model,gpus,price_usd,price_per,pricing_tier,quoted_at,source,entered_by"
GOOD_ROW = "lambda,8x H100 node,H100 SXM,64,2.10,gpu_hour,on_demand,2026-11-20,email,pat"
BAD_ROW = "crusoe,H200 pool,H200 SXM,,-3,gpu_hour,on_demand,2026-11-21,call,pat"
# the form's types: which AppTest accessor sets each input
DATES = ("quoted_at", "valid_until", "booked_from", "booked_to", "available_from")
NUMBERS = (
    "gpus_per_node",
    "gpus",
    "price_usd",
    "term_months",
    "min_commit_gpus",
    "min_commit_months",
    "fabric_gbps_per_gpu",
)
SELECTS = ("provider", "pricing_tier", "fabric_class")
RADIOS = ("price_per", "multi_node")
AREAS = ("notes",)


def writable_copy(fixture_warehouse: Path, tmp_path: Path) -> Path:
    path = tmp_path / "warehouse.duckdb"
    shutil.copyfile(fixture_warehouse, path)
    return path


def fill(app: AppTest, **values: object) -> AppTest:
    """Set the form's inputs (by field name) and submit it."""
    for name, value in values.items():
        key = f"quote_{name}"
        if name in DATES:
            app.date_input(key=key).set_value(value)
        elif name in NUMBERS:
            app.number_input(key=key).set_value(value)
        elif name in SELECTS:
            app.selectbox(key=key).select(value)
        elif name in RADIOS:
            app.radio(key=key).set_value(value)
        elif name in AREAS:
            app.text_area(key=key).input(value)
        else:
            app.text_input(key=key).input(value)
    return app.button(key="quote_submit").click().run()


# a Llama 3 70B job on 512 GPUs on demand can run on it, cheaper than any list price
LAMBDA_512 = {
    "provider": "lambda",
    "configuration": "1-Click Cluster 512x H100",
    "gpu_model": "H100 SXM",
    "gpus_per_node": 8,
    "gpus": 512,
    "price_usd": 0.5,
    "price_per": "gpu_hour",
    "pricing_tier": "on_demand",
    "quoted_at": date(2026, 12, 1),
    "valid_until": date(2027, 6, 30),
    "fabric_class": "infiniband",
    "fabric_gbps_per_gpu": 400.0,
    "multi_node": "yes",
    "source": "email from Lambda sales, 2026-12-01",
    "entered_by": "pat",
}


def test_the_form_has_an_input_for_every_field_of_a_quote(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    app = open_page(QUOTES)
    assert not app.exception and not app.error
    kinds = ("text_input", "number_input", "selectbox", "radio", "date_input", "text_area")
    keys = {widget.key for kind in kinds for widget in app.get(kind)}
    assert {f"quote_{name}" for name in QUOTE_FIELDS} <= keys
    providers = app.selectbox(key="quote_provider")
    assert "Lambda (lambda)" in providers.options  # the providers table's, by name
    text = text_of(app)
    assert "No quote stored yet" in text and "fill the template and upload it" in text


def test_a_quote_entered_in_the_form_is_stored_and_ranked_beside_the_list_prices(
    use_warehouse, fixture_warehouse, tmp_path
):
    path = use_warehouse(writable_copy(fixture_warehouse, tmp_path))
    before = current_snapshot(path)
    app = fill(open_page(QUOTES), **LAMBDA_512)
    assert not app.exception and not app.error
    stored = quotes.stored_quotes(path, AS_OF.date())
    assert len(stored) == 1
    quote = stored.iloc[0]
    quote_id = quote["quote_id"]
    assert f"Stored quote {quote_id}: lambda" in text_of(app)
    assert current_snapshot(path).snapshot_id == before.snapshot_id + 1
    assert quote["gpu_model"] == "H100-SXM-80GB"  # the alias resolved
    assert quote["multi_node"] == True  # noqa: E712 (a nullable boolean)
    assert pd.Timestamp(quote["valid_until"]).date() == date(2027, 6, 30)
    assert quote["file_name"] is None and quote["entered_by"] == "pat"
    listed = next(f.value for f in app.dataframe if "expired" in f.value.columns)
    assert list(listed["quote_id"]) == [quote_id] and not listed["expired"].iloc[0]
    assert listed["valid_until"].iloc[0] == date(2027, 6, 30)  # a date, not a timestamp

    # the same quote again: stored once, said so, no new snapshot
    snapshot = current_snapshot(path)
    app.button(key="quote_submit").click().run()
    assert f"Quote {quote_id} was already stored" in text_of(app)
    assert current_snapshot(path) == snapshot
    assert len(quotes.stored_quotes(path, AS_OF.date())) == 1

    ranked = open_page(RANK, {"preset": "llama3-70b", "gpus": "512"})
    assert not ranked.exception and not ranked.error
    offers = next(f.value for f in ranked.dataframe if "price_from" in f.value.columns)
    mine = offers[offers["price_from"] == f"your quote {quote_id}, valid until 2027-06-30"]
    assert len(mine) == 1
    assert mine["rank"].iloc[0] == 1  # 0.50 USD per GPU-hour on InfiniBand beats every list
    assert (offers["price_from"] == "list price").sum() == len(offers) - 1


def test_a_bad_entry_names_its_field_and_stores_nothing(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    before = current_snapshot(warehouse_path)
    app = fill(open_page(QUOTES), **{**LAMBDA_512, "price_usd": 0.0})
    assert not app.exception
    errors = [e.value for e in app.error]
    assert len(errors) == 1, errors
    assert errors[0].startswith("Price (USD) (`price_usd`): Input should be greater than 0")
    app = fill(app, price_usd=0.5, gpu_model="H999")
    errors = [e.value for e in app.error]
    assert len(errors) == 1 and errors[0].startswith("GPU (`gpu_model`): unknown GPU 'H999'")
    app = fill(app, gpu_model="H100 SXM", valid_until=date(2026, 11, 1))
    errors = [e.value for e in app.error]
    assert errors == ["The quote: valid_until is before quoted_at"]
    assert "Nothing was stored: correct the fields named above" in text_of(app)
    assert current_snapshot(warehouse_path) == before
    assert quotes.stored_quotes(warehouse_path, AS_OF.date()).empty
    assert "No quote stored yet" in text_of(app)


def test_a_file_lists_its_refused_rows_before_its_good_ones_are_stored(
    use_warehouse, warehouse_path
):
    use_warehouse(warehouse_path)
    before = current_snapshot(warehouse_path)
    app = open_page(QUOTES)
    data = "\n".join([HEADER, GOOD_ROW, BAD_ROW]).encode()
    app.file_uploader(key="quotes_file").upload("quotes.csv", data, "text/csv").run()
    assert not app.exception
    text = text_of(app)
    assert "**quotes.csv**: 1 rows good (1 not stored yet), 1 refused." in text
    [refused] = [e.value for e in app.error]
    assert "- quotes.csv line 3, field price_usd: Input should be greater than 0 (got '-3')" in (
        refused
    )
    preview = next(f.value for f in app.dataframe if "status" in f.value.columns)
    assert list(preview["where"]) == ["line 2"] and list(preview["status"]) == ["new"]
    assert current_snapshot(warehouse_path) == before, "nothing stored before the button"

    app.button(key="quotes_store").click().run()
    assert not app.exception
    stored = quotes.stored_quotes(warehouse_path, AS_OF.date())
    assert list(stored["provider"]) == ["lambda"]
    assert list(stored["file_name"]) == ["quotes.csv"] and list(stored["line"]) == [2]
    (quote_id,) = stored["quote_id"]
    assert f"Stored 1 quotes from quotes.csv ({quote_id}); 0 were already stored" in text_of(app)
    assert "Every good row of this file is already stored." in text_of(app)
    assert not [b for b in app.button if b.key == "quotes_store"]
    listed = next(f.value for f in app.dataframe if "expired" in f.value.columns)
    assert list(listed["quote_id"]) == [quote_id]


def test_a_file_that_is_no_quotes_file_is_refused_whole(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    before = current_snapshot(warehouse_path)
    app = open_page(QUOTES)
    offers = b"provider,instance_type,price\nlambda,gpu_8x_h100,23.92\n"
    app.file_uploader(key="quotes_file").upload("offers.csv", offers, "text/csv").run()
    assert not app.exception
    [error] = [e.value for e in app.error]
    assert error.startswith("This file is not a quotes file, and nothing of it is stored: ")
    assert "offers.csv line 1: unknown column 'instance_type'" in error
    assert not [b for b in app.button if b.key == "quotes_store"]
    app.file_uploader(key="quotes_file").upload("q.json", b"[1, 2]", "application/json").run()
    [error] = [e.value for e in app.error]
    assert "q.json item 1: not an object" in error
    assert current_snapshot(warehouse_path) == before


def test_the_templates_download_and_the_fields_are_explained(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    with captured_downloads() as stored:
        app = open_page(QUOTES)
        csv_template = download_data(app, "quotes_template_csv", stored).decode()
        json_template = json.loads(download_data(app, "quotes_template_json", stored))
    assert csv_template == quotes.template_csv()
    assert list(json_template[0]) == list(QUOTE_FIELDS)
    fields = next(f.value for f in app.dataframe if "meaning" in f.value.columns)
    assert fields.to_dict("records") == quotes.field_help()
