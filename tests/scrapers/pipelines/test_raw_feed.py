import json

from scrapy.utils.test import get_crawler

from fabricscope.scrapers.pipelines.raw_feed import RawFeedPipeline
from fabricscope.scrapers.spiders.lambda_cloud import LambdaCloudSpider


def test_every_item_is_kept_as_yielded_one_json_line_each(tmp_path, raw_offer):
    crawler = get_crawler(LambdaCloudSpider, {"FABRICSCOPE_RAW_DIR": str(tmp_path)})
    crawler.spider = LambdaCloudSpider.from_crawler(crawler)
    pipeline = RawFeedPipeline.from_crawler(crawler)
    pipeline.open_spider()
    pipeline.process_item(raw_offer(price="CONTACT SALES"))
    pipeline.process_item(raw_offer())
    pipeline.close_spider()
    run = crawler.spider.run
    lines = (tmp_path / "lambda_cloud" / f"{run.run_id}.jsonl").read_text().splitlines()
    assert [json.loads(line)["price"] for line in lines] == ["CONTACT SALES", 2.99]
    assert run.scraped == 2
