"""Rate counters without the write-ahead log: counting an attempt is the one write before
every question, and a transaction that writes only unlogged tables commits without waiting
for the log to reach the disk. A crash empties the table (PostgreSQL truncates unlogged
tables in recovery), which only forgives the attempts of the current window."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("limits", "0001_initial")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE limits_ratecounter SET UNLOGGED",
            reverse_sql="ALTER TABLE limits_ratecounter SET LOGGED",
        )
    ]
