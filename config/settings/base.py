"""Where Loupe is and keeps its data, whether it runs in production, and its secret key."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
DATA_DIR = Path(env_str("LOUPE_DATA_DIR", str(BASE_DIR / "var"))).resolve()

# Production (the Docker image sets it): a SECRET_KEY is required, cookies are secure, logs
# are JSON. Off, Loupe is one person's laptop: a key is made and kept in the data folder.
PRODUCTION = env_bool("LOUPE_PRODUCTION", False)
# Off unless asked for; `manage.py serve` (make run) asks for it when not in production.
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if PRODUCTION and len(SECRET_KEY) < 32:
    # Every web and worker process, on every machine, must share one key: a key generated
    # per machine would sign sessions the next machine rejects.
    raise ImproperlyConfigured(
        "SECRET_KEY is not set or shorter than 32 characters (LOUPE_PRODUCTION is on); set it "
        "to a long random string, e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )
if not SECRET_KEY:
    # A per-installation key kept in the data folder, so sessions survive restarts on a
    # laptop without anyone having to invent a secret. Production sets SECRET_KEY.
    _key_file = DATA_DIR / "secret_key"
    if not _key_file.exists():
        import secrets

        DATA_DIR.mkdir(parents=True, exist_ok=True)
        _key_file.write_text(secrets.token_urlsafe(50))
        _key_file.chmod(0o600)
    SECRET_KEY = _key_file.read_text().strip()
