from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from notebooks.first_run import first_run_box, wait_until_listening


def web_command(*, host: str, port: int) -> list[str]:
    """The ASGI server, as `make run` starts it and docker-compose.yml's web container runs
    it (ops/tests check they agree). uvicorn runs WEB_CONCURRENCY processes (default 1)."""
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "config.asgi:application",
        "--host",
        host,
        "--port",
        str(port),
        # On SIGTERM, answers still streaming get this long to finish.
        "--timeout-graceful-shutdown",
        "30",
    ]


class Command(BaseCommand):
    help = (
        "Start the web server (uvicorn, ASGI) and a Procrastinate worker together; "
        "Ctrl-C stops both. If either exits, the other is stopped too."
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
        web = web_command(host=options["host"], port=options["port"])
        env = dict(os.environ)
        if "DEBUG" not in env and not settings.PRODUCTION:
            env["DEBUG"] = "true"  # one person's laptop: Django's error pages help
        if options["no_worker"]:
            # Become the server: a stop signal reaches uvicorn itself.
            os.execve(python, web, env)
        commands = {"web": web, "worker": [python, "manage.py", "worker"]}
        processes = {name: subprocess.Popen(command, env=env) for name, command in commands.items()}
        # After the server's own start-up lines, so that the box is the last thing shown.
        if wait_until_listening(options["host"], options["port"], processes["web"]):
            self.stdout.write(first_run_box(options["host"], options["port"]))
            self.stdout.flush()  # a pipe (make run | tee) would hold it back

        def stop(*_: Any) -> None:
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, stop)
        exit_code = 0
        try:
            while True:
                for name, process in processes.items():
                    if process.poll() is not None:
                        self.stderr.write(f"The {name} process exited ({process.returncode}).")
                        exit_code = process.returncode or 1
                        raise KeyboardInterrupt
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            for process in processes.values():
                if process.poll() is None:
                    process.terminate()
            for process in processes.values():
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
        sys.exit(exit_code)
