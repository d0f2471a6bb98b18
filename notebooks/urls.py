from __future__ import annotations

app_name = "notebooks"
urlpatterns: list = []
