# Word, PowerPoint, Excel, OpenDocument, EPUB, RTF, HTML and CSV files get a kind of their
# own, "document"; before it they were stored as "text", told apart only by their reader.

from django.db import migrations, models

# The reader lines ingest/loaders/documents.py wrote for these files (READERS), as they
# were when this migration was written.
DOCUMENT_READERS = [
    "Word document",
    "PowerPoint slides",
    "Excel workbook",
    "OpenDocument spreadsheet",
    "OpenDocument text",
    "EPUB e-book",
    "RTF document",
    "HTML file (main text by trafilatura)",
    "CSV table",
]


def documents_of_kind_document(apps, schema_editor):
    Source = apps.get_model("library", "Source")
    Source.objects.filter(kind="text", reader__in=DOCUMENT_READERS).update(kind="document")


def documents_of_kind_text(apps, schema_editor):
    Source = apps.get_model("library", "Source")
    Source.objects.filter(kind="document").update(kind="text")


class Migration(migrations.Migration):

    dependencies = [
        ('library', '0022_source_stages_after_reading'),
    ]

    operations = [
        migrations.AlterField(
            model_name='source',
            name='kind',
            field=models.CharField(choices=[('pdf', 'PDF'), ('text', 'Text'), ('document', 'Document'), ('url', 'Web page'), ('image', 'Image'), ('audio', 'Audio'), ('generated', 'Generated document'), ('note', 'Note')], max_length=20),
        ),
        migrations.RunPython(documents_of_kind_document, documents_of_kind_text),
    ]
