"""Quotes: the prices providers quoted you, entered one at a time or imported from a file,
stored apart from the refreshed offers and ranked beside them (docs/QUOTES.md)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

import pandas as pd
import streamlit as st

from fabricscope.app.components import as_of, read_snapshot, settings_or_stop, status_caption
from fabricscope.config import ConfigError
from fabricscope.ops.status import FRESHNESS_SQL
from fabricscope.procurement import quotes
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import WarehouseError
from fabricscope.warehouse.models import FabricClass, PricingTier

STORED = "quotes_stored"  # the message of the last store, shown once after the rerun
NOT_STATED = "not stated"
MULTI_NODE = {NOT_STATED: None, "yes": True, "no": False}
PRICE_PER = {"gpu_hour": "per GPU-hour", "node_hour": "per node-hour"}
FABRICS = [c.value for c in FabricClass if c is not FabricClass.UNKNOWN]
# the widest dates a quote's calendar offers (Streamlit's default is ten years either side)
EARLIEST, LATEST = date(2000, 1, 1), date(2100, 12, 31)
# each field's label on the form, so an error names the field as the form shows it
LABELS = {
    "provider": "Provider",
    "sold_by": "Sold by (a reseller, if not the provider)",
    "configuration": "Configuration",
    "region": "Region or site",
    "gpu_model": "GPU",
    "gpus_per_node": "GPUs per node",
    "gpus": "GPUs quoted",
    "price_usd": "Price (USD)",
    "price_per": "Price per",
    "pricing_tier": "Pricing tier",
    "term_months": "Term (months, paid in full)",
    "min_commit_gpus": "Minimum GPUs",
    "min_commit_months": "Minimum months",
    "booked_from": "Booked from",
    "booked_to": "Booked to",
    "available_from": "Available from",
    "valid_until": "Valid until",
    "fabric_class": "Fabric class",
    "fabric_gbps_per_gpu": "Fabric Gb/s per GPU",
    "multi_node": "Multi-node (one cluster)",
    "fabric_note": "Fabric in the provider's words",
    "quoted_at": "Quoted on",
    "source": "Source",
    "source_url": "Source link",
    "notes": "Notes",
    "entered_by": "Entered by",
}
DATE_COLUMNS = ("quoted_at", "valid_until", "available_from", "booked_from", "booked_to")
SHOWN = [
    "quote_id",
    "expired",
    "provider",
    "sold_by",
    "configuration",
    "region",
    "gpu_model",
    "gpus_per_node",
    "gpus",
    "price_usd",
    "price_per",
    "price_usd_per_gpu_hour",
    "pricing_tier",
    "quoted_at",
    "valid_until",
    "fabric_class",
    "fabric_gbps_per_gpu",
    "multi_node",
    "source",
    "entered_by",
    "entered_at",
    "file_name",
    "line",
    "notes",
]
cc = st.column_config
STORED_COLUMNS: dict[str, Any] = {
    "expired": cc.CheckboxColumn("expired", help="Past its last valid day: not ranked"),
    "gpus_per_node": cc.NumberColumn("GPUs per node", format="%d"),
    "gpus": cc.NumberColumn("GPUs", format="%d"),
    "price_usd": cc.NumberColumn("price (USD)", format="%.4f"),
    "price_usd_per_gpu_hour": cc.NumberColumn("USD per GPU-hour", format="%.4f"),
    "fabric_gbps_per_gpu": cc.NumberColumn("Gb/s per GPU", format="%.0f"),
    "entered_at": cc.DatetimeColumn("entered at (UTC)", format="YYYY-MM-DD HH:mm"),
    "line": cc.NumberColumn("line", format="%d"),
    **{name: cc.DateColumn(name, format="YYYY-MM-DD") for name in DATE_COLUMNS},
}


def refused_text(name: str, refused: Sequence[quotes.RowError], shown: int = 100) -> str:
    """The refused rows as a list, each with its line (or item) and field."""
    lines = [f"- {name} {problem}" for problem in refused[:shown]]
    if len(refused) > shown:
        lines.append(f"- ... and {len(refused) - shown:,} more")
    return "\n".join(lines)


def stored_table(stored: pd.DataFrame) -> pd.DataFrame:
    """The stored quotes as shown: dates as dates, the newest entered first."""
    table = stored[SHOWN].copy()
    for name in table.columns.intersection(DATE_COLUMNS):
        table[name] = pd.to_datetime(table[name]).dt.date
    return table.iloc[::-1].reset_index(drop=True)


path, stale_after_hours, _ = settings_or_stop()
snapshot, frames = read_snapshot(
    path, {"freshness": FRESHNESS_SQL, "providers": reads.sql("app_reference_providers")}
)
today = (as_of() or datetime.now(UTC)).date()
st.title("Quotes you received")
status_caption(snapshot, frames["freshness"], stale_after_hours)
st.markdown(
    "A quote is a price a provider gave you rather than the one it publishes: enter it here and "
    "every ranking compares it with the list prices for your job, on the same model, fabric "
    "ranges and exclusions (its price column says *your quote q-…*). Quotes are stored apart "
    "from the scraped offers: no refresh changes or removes them, and an expired one is left "
    "out of rankings with the reason."
)
if STORED in st.session_state:
    message, new = st.session_state.pop(STORED)
    (st.success if new else st.info)(message)

try:
    stored = quotes.stored_quotes(path, today)
except WarehouseError as exc:
    st.error(f"The stored quotes cannot be read: {exc}")
    st.stop()
stored_shas = set(stored["content_sha256"])

# ---- one quote

st.subheader("Enter a quote")
providers = frames["providers"]
names = dict(zip(providers["provider"], providers["display_name"], strict=True))
with st.form("quote_form"):
    left, middle, right = st.columns(3)
    provider = left.selectbox(
        LABELS["provider"],
        list(names),
        index=None,
        format_func=lambda slug: f"{names[slug]} ({slug})" if slug in names else slug,
        accept_new_options=True,
        placeholder="Choose, or type a name",
        help="The cloud the GPUs run on, as the providers table names it (type one it lacks "
        "in lowercase: letters, digits and _)",
        key="quote_provider",
    )
    sold_by = middle.text_input(LABELS["sold_by"], key="quote_sold_by")
    configuration = right.text_input(
        LABELS["configuration"],
        placeholder="1-Click Cluster 512x H100",
        help="The instance type or configuration as quoted",
        key="quote_configuration",
    )
    left, middle, right = st.columns(3)
    gpu_model = left.text_input(
        LABELS["gpu_model"],
        placeholder="H100 SXM",
        help="A name from the GPUs and fabrics page or an alias (H100 SXM, H200, B200...)",
        key="quote_gpu_model",
    )
    gpus_per_node = middle.number_input(
        LABELS["gpus_per_node"], value=8, step=1, key="quote_gpus_per_node"
    )
    gpus = right.number_input(
        LABELS["gpus"],
        value=None,
        step=1,
        help="The capacity offered in all (a whole number of nodes)",
        key="quote_gpus",
    )
    left, middle, right = st.columns(3)
    price_usd = left.number_input(
        LABELS["price_usd"], value=None, step=0.01, format="%.4f", key="quote_price_usd"
    )
    price_per = middle.radio(
        LABELS["price_per"],
        list(PRICE_PER),
        format_func=PRICE_PER.__getitem__,
        horizontal=True,
        key="quote_price_per",
    )
    pricing_tier = right.selectbox(
        LABELS["pricing_tier"], [t.value for t in PricingTier], key="quote_pricing_tier"
    )
    left, middle, right = st.columns(3)
    quoted_at = left.date_input(
        LABELS["quoted_at"],
        value=None,
        min_value=EARLIEST,
        max_value=LATEST,
        format="YYYY-MM-DD",
        key="quote_quoted_at",
    )
    valid_until = middle.date_input(
        LABELS["valid_until"],
        value=None,
        min_value=EARLIEST,
        max_value=LATEST,
        format="YYYY-MM-DD",
        help="The last day the quote holds; empty if it states none",
        key="quote_valid_until",
    )
    region = right.text_input(LABELS["region"], key="quote_region")
    left, middle, right = st.columns(3)
    fabric_class = left.selectbox(
        LABELS["fabric_class"],
        FABRICS,
        index=None,
        placeholder=NOT_STATED,
        help="Not stated: ranked as an unknown fabric (a range from Ethernet to InfiniBand)",
        key="quote_fabric_class",
    )
    fabric_gbps = middle.number_input(
        LABELS["fabric_gbps_per_gpu"],
        value=None,
        step=50.0,
        format="%.0f",
        help="Inter-node bandwidth per GPU, as quoted; empty if not stated",
        key="quote_fabric_gbps_per_gpu",
    )
    multi_node = right.radio(
        LABELS["multi_node"], list(MULTI_NODE), horizontal=True, key="quote_multi_node"
    )
    left, middle, right = st.columns(3)
    source = left.text_input(
        LABELS["source"],
        placeholder="email from sales, 2026-11-28",
        help="Where the quote is: an email, an order form, call notes",
        key="quote_source",
    )
    source_url = middle.text_input(LABELS["source_url"], key="quote_source_url")
    entered_by = right.text_input(LABELS["entered_by"], key="quote_entered_by")
    with st.expander("Terms, booking and notes (optional)"):
        left, middle, right = st.columns(3)
        term_months = left.number_input(
            LABELS["term_months"],
            value=None,
            step=1,
            help="A reserved tier implies its own (reserved_1y is 12)",
            key="quote_term_months",
        )
        min_commit_gpus = middle.number_input(
            LABELS["min_commit_gpus"], value=None, step=1, key="quote_min_commit_gpus"
        )
        min_commit_months = right.number_input(
            LABELS["min_commit_months"], value=None, step=1.0, key="quote_min_commit_months"
        )
        left, middle, right = st.columns(3)
        booked_from, booked_to, available_from = (
            column.date_input(
                LABELS[name],
                value=None,
                min_value=EARLIEST,
                max_value=LATEST,
                format="YYYY-MM-DD",
                key=f"quote_{name}",
            )
            for column, name in (
                (left, "booked_from"),
                (middle, "booked_to"),
                (right, "available_from"),
            )
        )
        fabric_note = st.text_input(LABELS["fabric_note"], key="quote_fabric_note")
        notes = st.text_area(LABELS["notes"], key="quote_notes")
    submitted = st.form_submit_button("Store this quote", type="primary", key="quote_submit")

if submitted:
    values: dict[str, Any] = {
        "provider": provider,
        "sold_by": sold_by,
        "configuration": configuration,
        "region": region,
        "gpu_model": gpu_model,
        "gpus_per_node": gpus_per_node,
        "gpus": gpus,
        "price_usd": price_usd,
        "price_per": price_per,
        "pricing_tier": pricing_tier,
        "term_months": term_months,
        "min_commit_gpus": min_commit_gpus,
        "min_commit_months": min_commit_months,
        "booked_from": booked_from,
        "booked_to": booked_to,
        "available_from": available_from,
        "valid_until": valid_until,
        "fabric_class": fabric_class,
        "fabric_gbps_per_gpu": fabric_gbps,
        "multi_node": MULTI_NODE[multi_node],
        "fabric_note": fabric_note,
        "quoted_at": quoted_at,
        "source": source,
        "source_url": source_url,
        "notes": notes,
        "entered_by": entered_by,
    }
    checked = quotes.check(values, "the form")
    if isinstance(checked, list):
        for problem in checked:
            field = problem.field
            where = f"{LABELS.get(field, field)} (`{field}`)" if field else "The quote"
            st.error(f"{where}: {problem.message}")
        st.caption("Nothing was stored: correct the fields named above and store it again.")
    else:
        entered = quotes.Entered(checked, "the form", None)
        try:
            done = quotes.store(path, [entered], datetime.now(UTC))
        except (ConfigError, WarehouseError) as exc:
            st.error(f"Not stored: {exc}")
        else:
            (quote_id,) = done.stored or done.already
            if done.stored:
                st.session_state[STORED] = (
                    f"Stored quote {quote_id}: {checked.provider} · {checked.configuration} · "
                    f"{checked.price_usd_per_gpu_hour:,.4g} USD per GPU-hour · "
                    f"{checked.pricing_tier.value}. Every ranking of its tier now compares it "
                    "with the list prices.",
                    True,
                )
            else:
                st.session_state[STORED] = (
                    f"Quote {quote_id} was already stored (a quote with the same fields was "
                    "entered before); nothing new was stored.",
                    False,
                )
            st.rerun()

# ---- a file of quotes

st.subheader("Import a file")
st.markdown(
    "Fill the template, one row per quote (a CSV file, or a JSON list of objects), and upload "
    "it: every row is checked, and you see which are refused and why before anything is "
    "stored. `fabricscope quote import` does the same from the command line."
)
left, right, _ = st.columns([1, 1, 3])
left.download_button(
    "CSV template",
    quotes.template_csv(),
    file_name="quotes.csv",
    mime="text/csv",
    key="quotes_template_csv",
)
right.download_button(
    "JSON template",
    quotes.template_json(),
    file_name="quotes.json",
    mime="application/json",
    key="quotes_template_json",
)
with st.expander("The fields of a quote"):
    st.dataframe(pd.DataFrame(quotes.field_help()), hide_index=True, width="stretch")
upload = st.file_uploader("Quotes file (CSV or JSON)", type=["csv", "json"], key="quotes_file")
if upload is not None:
    try:
        good, refused = quotes.parse(upload.getvalue(), upload.name)
    except quotes.QuoteFileError as exc:
        st.error(f"This file is not a quotes file, and nothing of it is stored: {exc}")
    else:
        received = datetime.now(UTC)
        records = [quotes.record(e, received, upload.name) for e in good]
        new = [
            e for e, r in zip(good, records, strict=True) if r["content_sha256"] not in stored_shas
        ]
        st.markdown(
            f"**{upload.name}**: {len(good):,} rows good ({len(new):,} not stored yet), "
            f"{len(refused):,} refused."
        )
        if refused:
            st.error(
                "Refused, and not stored; correct them and upload the file again:\n\n"
                + refused_text(upload.name, refused)
            )
        if good:
            preview = pd.DataFrame(
                {
                    "where": [e.where for e in good],
                    "quote_id": [r["quote_id"] for r in records],
                    "provider": [e.quote.provider for e in good],
                    "configuration": [e.quote.configuration for e in good],
                    "gpu_model": [e.quote.gpu_model for e in good],
                    "price_usd_per_gpu_hour": [e.quote.price_usd_per_gpu_hour for e in good],
                    "pricing_tier": [e.quote.pricing_tier.value for e in good],
                    "valid_until": [e.quote.valid_until for e in good],
                    "status": [
                        "new" if r["content_sha256"] not in stored_shas else "already stored"
                        for r in records
                    ],
                }
            )
            st.dataframe(
                preview,
                hide_index=True,
                width="stretch",
                column_config={
                    "price_usd_per_gpu_hour": STORED_COLUMNS["price_usd_per_gpu_hour"],
                    "valid_until": STORED_COLUMNS["valid_until"],
                },
            )
        if new:
            if st.button(f"Store the {len(new):,} new rows", type="primary", key="quotes_store"):
                try:
                    done = quotes.store(path, good, datetime.now(UTC), upload.name)
                except (ConfigError, WarehouseError) as exc:
                    st.error(f"Not stored: {exc}")
                else:
                    skipped = f"; {len(refused):,} rows refused (above)" if refused else ""
                    st.session_state[STORED] = (
                        f"Stored {len(done.stored):,} quotes from {upload.name} "
                        f"({', '.join(done.stored)}); {len(done.already):,} were already "
                        f"stored{skipped}.",
                        True,
                    )
                    st.rerun()
        elif good:
            st.info("Every good row of this file is already stored.")

# ---- what is stored

st.subheader("Stored quotes")
if stored.empty:
    st.info(
        "No quote stored yet. Enter one with the form above, or fill the template and upload "
        "it (or `fabricscope quote import quotes.csv`)."
    )
else:
    expired = int(stored["expired"].sum())
    st.caption(
        f"{len(stored):,} quotes, the newest entered first; {expired:,} of them expired as of "
        f"{today:%Y-%m-%d} (past their last valid day: rankings leave them out, saying so; ask "
        "the provider for a new one)."
    )
    st.dataframe(
        stored_table(stored), hide_index=True, width="stretch", column_config=STORED_COLUMNS
    )
