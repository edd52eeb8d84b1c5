"""The training shortlist says how far to trust its times and costs: the model's held-out
error band beside each offer in the memo, the workbook and the CSV."""

from __future__ import annotations

import openpyxl
import pandas as pd

from fabricscope.model.error_bands import notes
from fabricscope.procurement import shortlist
from tests.procurement.test_shortlist import written  # noqa: F401  (the module's fixture)


def test_the_memo_puts_the_error_band_beside_each_offer_and_says_what_it_means(written):  # noqa: F811
    picked, (csv_path, xlsx_path, memo_path, _) = written
    rows = picked.rows
    assert rows["error_band_pct"].notna().all()
    text = memo_path.read_text(encoding="utf-8")
    table = text.split("## Shortlist", 1)[1].split("\n## ", 1)[0]
    assert "| ± (held out) |" in table
    for _, row in rows.iterrows():
        line = next(line for line in table.splitlines() if f"`{row['instance_type']}`" in line)
        assert f"| ±{row['error_band_pct']:.0f}% |" in line
    trust = text.split("## How far to trust the times and costs", 1)[1].split("\n## ", 1)[0]
    for note in notes(rows.to_dict("records")):
        assert f"- {note[0].upper()}{note[1:]}." in trust
    assert "the p90 of the held-out errors on" in trust
    first = rows.iloc[0]
    low, high = first["time_to_train_h_band_low"] / 24, first["time_to_train_h_band_high"] / 24
    assert f"`{first['instance_type']}`: {low:,.1f}-{high:,.1f} days" in trust
    # the workbook's decisive sheet holds the band beside the time, in percent
    book = openpyxl.load_workbook(xlsx_path)
    headers = [cell.value for cell in book["shortlist"][1]]
    at = headers.index("Error band, held out (± %, p90)")
    assert headers[at - 1] == "Time to train (days)"
    cells = [book["shortlist"].cell(row=r, column=at + 1).value for r in range(2, len(rows) + 2)]
    assert cells == list(rows["error_band_pct"])
    # side by side, with the cell it comes from; the CSV has every band column
    side = shortlist.side_by_side(picked).set_index("what")
    assert side.loc["Error band (held out)"].iloc[0] == (
        f"±{first['error_band_pct']:.0f}% ({first['error_band_cell']}, "
        f"{first['error_band_runs']} runs held out)"
    )
    read = pd.read_csv(csv_path)
    assert list(read["error_band_cell"]) == list(rows["error_band_cell"])
