"""Work a worker does for a row in the background: a source read and embedded, a document
made.

Each such row says where its work stands for the page (status, stage, progress) and, once
it failed or waits for another attempt, why, in the reader's language (texts/__init__.py).
What a run does with an error is `ops.jobs.run_background_work`.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _

from texts import Text, assign


class BackgroundWork(models.Model):
    """A row a worker makes: queued, processing, then ready or failed (with the reason)."""

    # The words of the sources list's badges (templates/notebooks/_status_badge.html).
    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        PROCESSING = "processing", _("Processing")
        READY = "ready", _("Ready")
        FAILED = "failed", _("Failed")

    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    # What the worker is doing ("" when nothing): each kind of work declares this field again
    # with the choices of its own stages.
    stage = models.CharField(max_length=20, blank=True)
    # How far the stage got (pages read, chunks embedded), written outside the run's
    # transactions so the page shows it while the work goes on.
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    # Its msgid and parameters, for the reader's language (texts/__init__.py).
    error_i18n = models.JSONField(null=True, blank=True, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in {self.Status.READY, self.Status.FAILED}

    def start(self, stage: str) -> None:
        """Processing from `stage`, no error and no progress yet; called under the row's
        lock, so that two runs of one row never both start it."""
        self.status = self.Status.PROCESSING
        self.error = ""
        self.stage = stage
        self.progress_done = self.progress_total = 0
        self.save(
            update_fields=[
                "status",
                "error",
                "stage",
                "progress_done",
                "progress_total",
                "updated_at",
            ]
        )

    def report_progress(self, *, stage: str, done: int = 0, total: int = 0, **also: Any) -> None:
        """Say what the worker is doing (and `also` any other columns), in a short UPDATE of
        its own: it commits at once (no transaction is open around it), so the page shows it
        while the work goes on."""
        fields = {"stage": stage, "progress_done": done, "progress_total": total, **also}
        type(self)._default_manager.filter(pk=self.pk).update(**fields)
        for name, value in fields.items():
            setattr(self, name, value)

    def queue_again(self, message: Text | str) -> None:
        """The job will run again; the row says why it waits. Work that is ready already (a
        source searched by its words while its vectors are made) stays ready, the rest of
        it paused."""
        error = assign(
            self, "error", Text("%(message)s Loupe will try again shortly.", message=message)
        )
        if self.status == self.Status.READY:
            self.save(update_fields=[*error, "updated_at"])
            return
        self.status = self.Status.QUEUED
        self.stage = ""
        self.save(update_fields=["status", *error, "stage", "updated_at"])

    def fail(self, message: Text | str) -> None:
        """The work failed for good (until someone retries it), saying why."""
        self.status = self.Status.FAILED
        error = assign(self, "error", message)
        self.stage = ""
        self.save(update_fields=["status", *error, "stage", "updated_at"])
