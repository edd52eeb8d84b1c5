"""Check every item against the warehouse contracts; a bad one is dropped with its field."""

from __future__ import annotations

from pydantic import ValidationError

from fabricscope.scrapers.items import RawItem, RawOffer
from fabricscope.scrapers.pipelines import FabricscopePipeline
from fabricscope.warehouse.models import FabricFact, Offer


class ValidatePipeline(FabricscopePipeline):
    def process_item(self, item: RawItem) -> Offer | FabricFact:
        contract = Offer if isinstance(item, RawOffer) else FabricFact
        # a scrapy.Item of plain values: dict() is all it takes (ItemAdapter.asdict
        # recurses into every value and was half of the pipelines' time)
        fields = {name: value for name, value in item.items() if name in contract.model_fields}
        fields.update(
            source=self.run.source, observed_at=self.run.observed_at or self.run.started_at
        )
        try:
            return contract(**fields)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"]) or "item"
            raise self.drop(
                f"invalid_{where}" if where != "item" else "invalid",
                f"{fields.get('instance_type')!r} from {fields.get('provider')}: "
                f"{where}: {error['msg']}",
            ) from None
