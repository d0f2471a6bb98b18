import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Bodies over REQUEST_MAX_BYTES are refused before Django reads them (limits/middleware.py).
from limits.middleware import BodySizeLimit  # noqa: E402 - needs the settings module set

application = BodySizeLimit(get_asgi_application())
