-- Every quote the buyer entered, oldest first, a file's in its order (fabricscope/procurement/quotes.py stored_quotes).
select * exclude (snapshot_id) from quotes order by entered_at, file_name, line, quote_id
