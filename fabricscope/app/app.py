"""fabricscope's Streamlit app: the entry point builds the navigation."""

from __future__ import annotations

import sys
from pathlib import Path

# `streamlit run fabricscope/app/app.py` puts fabricscope/app/ on the path, not the project:
# add the project.
_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import streamlit as st  # noqa: E402

st.set_page_config(page_title="fabricscope", page_icon="🛰️", layout="wide")

PAGES = Path(__file__).parent / "pages"
navigation = st.navigation(
    [
        st.Page(PAGES / "rank.py", title="Rank", icon="🏁", default=True),
        st.Page(PAGES / "overview.py", title="Overview", icon="🧭"),
        st.Page(PAGES / "offers.py", title="Offers", icon="💲"),
        st.Page(PAGES / "providers.py", title="Providers", icon="🏢"),
        st.Page(PAGES / "calibrate.py", title="Calibrate", icon="📏"),
        st.Page(PAGES / "shortlist.py", title="Shortlist", icon="⭐"),
        st.Page(PAGES / "quotes.py", title="Quotes", icon="📨"),
        st.Page(PAGES / "reference.py", title="GPUs and fabrics", icon="🧮"),
        st.Page(PAGES / "sql.py", title="SQL", icon="🔎"),
    ]
)
navigation.run()
