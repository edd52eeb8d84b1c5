"""Charts: one colour per provider, the same in every chart whichever providers it shows."""

from __future__ import annotations

from fabricscope.app.charts import PALETTE, provider_colours, time_cost_scatter
from fabricscope.app.view_state import RankView, request_of
from fabricscope.rank.ranking import rank, read_inputs
from tests.helpers import AS_OF


def test_every_provider_has_its_own_colour_and_keeps_it():
    names = [f"provider_{i:02d}" for i in range(len(PALETTE) + 15)]
    colours = provider_colours(reversed(names))
    assert list(colours) == sorted(names)
    assert len(set(colours.values())) == len(names), "no colour repeats, past the palette too"
    assert provider_colours(names[:3]) == {n: colours[n] for n in names[:3]}


def test_the_scatter_colours_a_provider_alike_in_two_rankings(fixture_warehouse):
    every = read_inputs(fixture_warehouse).catalog["provider"]
    scales = []
    for view in (RankView(), RankView(preset="llama3-70b", gpus="1024", objective="time")):
        offers = rank(fixture_warehouse, request_of(view), AS_OF).offers
        spec = time_cost_scatter(offers, every).to_dict()
        [points] = [layer for layer in spec["layer"] if "color" in layer.get("encoding", {})]
        color = points["encoding"]["color"]
        scale = dict(zip(color["scale"]["domain"], color["scale"]["range"], strict=True))
        assert sorted(color["legend"]["values"]) == sorted(set(offers["provider"]))
        scales.append(scale)
    assert scales[0] == scales[1] == provider_colours(every)
