-- Every provider's answer the buyer entered, oldest first, a file's in its order (fabricscope/procurement/rfi.py stored_answers).
select * exclude (snapshot_id) from rfi_answers order by entered_at, file_name, line, answer_id
