# The citation family (citations/models.py): an answer's and a note's citations say, as a
# studio document's do, whether Loupe placed the marker rather than the model. Filled from
# generation's side table by generation 0009_citation_family.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('notebooks', '0009_memory_commands_and_given_facts'),
    ]

    operations = [
        migrations.AddField(
            model_name='citation',
            name='attributed',
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name='notecitation',
            name='attributed',
            field=models.BooleanField(default=False),
        ),
    ]
