from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from config.database import restart_embedded_postgres_if_down
from config.env import env_str
from ops.first_run import first_run_box, wait_until_listening
from ops.serving import supervise, web_command
from providers.local_model import LocalModelUnavailable, local_chat_plan
from providers.local_model_supervisor import LocalModelServer

logger = logging.getLogger(__name__)


def restart_embedded_database() -> None:
    """The embedded PostgreSQL (no DATABASE_URL), started again if it died."""
    restart_embedded_postgres_if_down(settings.DATA_DIR, env_str("DATABASE_SHARED_BUFFERS"))


class Command(BaseCommand):
    help = (
        "Start the web server (uvicorn, ASGI), a Procrastinate worker and, when no chat model "
        "is configured, the local model server together; Ctrl-C stops them all. A worker or "
        "model server that exits is started again (after a pause that grows while it keeps "
        "exiting), and so is the embedded PostgreSQL; if the web server exits, the others are "
        "stopped too. "
        "Django's debug pages only with DEBUG=true."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--no-worker",
            action="store_true",
            help="web server only, in place of this process",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        python = sys.executable
        web_argv = web_command(host=options["host"], port=options["port"])
        if options["no_worker"]:
            # Become the server: a stop signal reaches uvicorn itself.
            os.execv(python, web_argv)
        worker_argv = [python, "manage.py", "worker"]
        model, model_line = self.start_local_model()
        # The web server and the worker answer with the local model through these settings.
        environment = os.environ | (model.environment() if model else {})
        web = subprocess.Popen(web_argv, env=environment)
        worker = subprocess.Popen(worker_argv, env=environment)
        worker_started = time.monotonic()
        # After the server's own start-up lines, so that the box is the last thing shown.
        if wait_until_listening(options["host"], options["port"], web):
            if model is not None and not model.wait_ready(settings.LOCAL_CHAT_START_SECONDS):
                logger.error("the local model server is not ready yet: %s", model.state)
            if model is not None:
                model_line = model.describe()
            self.stdout.write(first_run_box(options["host"], options["port"], chat=model_line))
            self.stdout.flush()  # a pipe (make run | tee) would hold it back

        exit_code = supervise(
            web,
            worker,
            worker_started=worker_started,
            worker_argv=worker_argv,
            environment=environment,
            model=model,
            restart_database=None if env_str("DATABASE_URL") else restart_embedded_database,
        )
        sys.exit(exit_code)

    def start_local_model(self) -> tuple[LocalModelServer | None, str]:
        """The local model server, started, when Loupe should answer with it; else None and
        the sentence the first-run box says of the chat model."""
        if settings.CHAT_MODEL:
            return (
                None,
                f"{settings.CHAT_MODEL} at {settings.CHAT_BASE_URL or settings.OPENAI_BASE_URL}",
            )
        plan = local_chat_plan()
        if plan.path is None:
            line = f"none, answers quote the passages: {plan.reason}"
            if plan.reason != "off (LOCAL_CHAT_MODEL=off)":
                logger.warning("no local chat model: %s", plan.reason)
            return None, line
        model = LocalModelServer(plan)
        try:
            model.start()
        except LocalModelUnavailable as exc:
            logger.warning("no local chat model: %s", exc)
            return None, f"none, answers quote the passages: {exc}"
        return model, model.describe()
