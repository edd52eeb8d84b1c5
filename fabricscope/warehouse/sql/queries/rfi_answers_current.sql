-- Each provider's current answer to each question of the questionnaire; the columns are RFI_COLUMNS (fabricscope/evidence/transparency.py).
select provider,
       question_id,
       value,
       answer,
       evidence_url,
       attachment,
       answered_on,
       answered_by,
       entered_at
from rfi_answers_current
order by provider, question_id
