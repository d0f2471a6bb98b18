from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandParser

from ops.commands import DatabaseCommand
from ops.first_run import DEMO_USERNAME, demo_login_file, shown_path


class Command(DatabaseCommand):
    help = (
        "Create the demo user if missing and print its login. The password is generated "
        "once and kept in the data folder (demo-login.txt), so the printed login always works. "
        "The demo user is no admin: `make admin` creates one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default=DEMO_USERNAME)

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["username"]
        login_file = demo_login_file()
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        password = login_file.read_text().strip() if login_file.exists() else ""
        if user is None or not password or not user.check_password(password):
            password = secrets.token_urlsafe(12)
            if user is None:
                user = User(username=username)
            user.set_password(password)
            user.save()
            settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
            login_file.write_text(password + "\n")
            login_file.chmod(0o600)
        self.stdout.write(
            f"Sign in as: {username}  password: {password}  (kept in {shown_path(login_file)})"
        )
