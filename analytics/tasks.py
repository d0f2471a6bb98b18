from __future__ import annotations

from procrastinate.contrib.django import app

from analytics.services import delete_expired_logs


# Questions are personal data: kept QUESTION_LOG_DAYS, then deleted, once a day.
@app.periodic(cron="41 3 * * *")
@app.task(queue="maintenance", queueing_lock="delete_expired_question_logs")
def delete_expired_question_logs(timestamp: int) -> None:
    delete_expired_logs()
