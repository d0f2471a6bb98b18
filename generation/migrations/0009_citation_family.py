# The citation family (citations/models.py): the one-flag side table AttributedCitation
# becomes the `attributed` field notebooks 0010_citation_family added. Every row carries
# over: its answer citation is marked, and so is the same [n] of each note saved from that
# answer (a note copies its answer's citations). Migrating back makes the rows again.

from django.db import migrations
from django.db.models import Exists, OuterRef


def into_the_field(apps, schema_editor):
    AttributedCitation = apps.get_model('generation', 'AttributedCitation')
    Citation = apps.get_model('notebooks', 'Citation')
    NoteCitation = apps.get_model('notebooks', 'NoteCitation')
    Citation.objects.filter(
        pk__in=AttributedCitation.objects.values('citation_id')
    ).update(attributed=True)
    NoteCitation.objects.filter(
        Exists(
            Citation.objects.filter(
                attributed=True, message_id=OuterRef('note__from_message_id'), n=OuterRef('n')
            )
        )
    ).update(attributed=True)


def into_the_side_table(apps, schema_editor):
    AttributedCitation = apps.get_model('generation', 'AttributedCitation')
    Citation = apps.get_model('notebooks', 'Citation')
    AttributedCitation.objects.bulk_create(
        AttributedCitation(citation_id=pk)
        for pk in Citation.objects.filter(attributed=True).values_list('pk', flat=True)
    )


class Migration(migrations.Migration):

    dependencies = [
        ('generation', '0008_slides_and_video'),
        ('notebooks', '0010_citation_family'),
    ]

    operations = [
        migrations.RunPython(into_the_field, into_the_side_table),
        migrations.DeleteModel(
            name='AttributedCitation',
        ),
    ]
