"""Scrapy settings for fabricscope's spiders (the spiders arrive with the scrapers issue)."""

BOT_NAME = "fabricscope"
SPIDER_MODULES = ["scrapers.spiders"]
NEWSPIDER_MODULE = "scrapers.spiders"

# Politeness: obey robots.txt and say who we are.
ROBOTSTXT_OBEY = True
USER_AGENT = "fabricscope/0.1 (+https://github.com/fabricscope/fabricscope; GPU price comparison)"
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_DELAY = 1.0
AUTOTHROTTLE_ENABLED = True
FEED_EXPORT_ENCODING = "utf-8"
