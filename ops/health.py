"""/healthz: can this instance serve? The database answers, its schema is current, a
worker has been seen recently (otherwise uploads would queue for ever), and no work is
stuck (the backlog: what waits, what failed lately).

Answered by a middleware at the top of the stack, before the host check and the HTTPS
redirect, so a load balancer or Docker's healthcheck can ask by IP over plain HTTP. It
shows nothing private: check names and what is wrong. How much work waits or failed is
shown only to signed-in staff and to the addresses in HEALTH_DETAIL_ADDRESSES (a
monitoring host): to anyone else it says how busy the site is and how its users fare.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.decorators import sync_and_async_middleware

HEALTH_PATH = "/healthz"
logger = logging.getLogger(__name__)

# Once the schema is current it stays so for this process's code (a newer release's
# migrations are applied by its own web container); loading the migration graph costs tens
# of milliseconds, so it is not repeated on every probe.
_migrations_current = False


def check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return "ok"


def check_migrations() -> str:
    global _migrations_current
    if _migrations_current:
        return "ok"
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        names = ", ".join(f"{m.app_label}.{m.name}" for m, _ in plan[:5])
        more = f" and {len(plan) - 5} more" if len(plan) > 5 else ""
        raise HealthProblem(
            f"{len(plan)} migration(s) not applied ({names}{more}); run manage.py migrate"
        )
    _migrations_current = True
    return "ok"


def check_worker() -> str:
    from procrastinate.contrib.django.models import ProcrastinateWorker

    seconds = settings.HEALTH_WORKER_SECONDS
    since = timezone.now() - timedelta(seconds=seconds)
    alive = ProcrastinateWorker.objects.filter(last_heartbeat__gte=since).count()
    if not alive:
        raise HealthProblem(
            f"no worker has sent a heartbeat in the last {seconds} s; start one: manage.py worker"
        )
    return f"ok ({alive} seen in the last {seconds} s)"


def check_backlog(*, detailed: bool = True) -> str:
    """How much work waits or runs, how much failed lately, and whether any is stuck: queued
    or processing with no live job for longer than the minute-by-minute recovery
    (ops/recovery.py) needs to put it right. Not `detailed`: the verdict without counts."""
    from ops import recovery

    stuck_before = timezone.now() - timedelta(seconds=STUCK_SECONDS)
    failed_since = timezone.now() - timedelta(hours=24)
    parts: list[str] = []
    stuck: list[str] = []
    for work in recovery.registered():
        model, name = work.model, work.name
        unfinished = model.objects.filter(status__in=[model.Status.QUEUED, model.Status.PROCESSING])
        held = {
            args.get(work.argument)
            for args in recovery.live_jobs(work.task_name).values_list("args", flat=True)
        }
        waiting = unfinished.count()
        failed = model.objects.filter(status=model.Status.FAILED, updated_at__gte=failed_since)
        parts.append(f"{waiting} {name}s queued or processing, {failed.count()} failed in 24 h")
        unheld = unfinished.exclude(pk__in=held).filter(updated_at__lt=stuck_before).count()
        if unheld:
            stuck.append(f"{unheld} {name}(s)")
    if stuck and not detailed:
        raise HealthProblem(
            f"work queued or processing with no job working on it for over {STUCK_SECONDS} s"
        )
    if stuck:
        raise HealthProblem(
            f"{' and '.join(stuck)} queued or processing with no job working on them for over "
            f"{STUCK_SECONDS} s; the recovery job runs every minute on the maintenance queue: "
            "is a worker taking it?"
        )
    reembed = recovery.reembed_failed()
    if reembed:
        raise HealthProblem(reembed if detailed else "a re-embed failed")
    return f"ok ({'; '.join(parts)})" if detailed else "ok"


def check_chat() -> str:
    """Which chat model answers; the local model server's state when `serve` runs one. Said,
    never a problem: without a model, answers quote the passages."""
    from providers.chat import chat_available
    from providers.local_model import local_chat_wanted, read_status

    status = read_status()
    if status and status.get("url") == settings.CHAT_BASE_URL:
        restarts = f", restarted {status['restarts']} times" if status.get("restarts") else ""
        problem = f": {status['problem']}" if status.get("problem") else ""
        return f"local {status['description']}: {status['state']}{restarts}{problem}"
    if chat_available():
        return f"ok ({settings.CHAT_MODEL})"
    if local_chat_wanted():
        return "none: no local model server runs (manage.py serve starts one)"
    return "none: answers quote the passages"


# The recovery runs every minute, and a dead worker's job counts as stalled after
# JOB_STALLED_SECONDS (20): anything unheld for longer than this was missed.
STUCK_SECONDS = 300


class HealthProblem(Exception):
    pass


CHECKS: dict[str, Callable[[], str]] = {
    "database": check_database,
    "migrations": check_migrations,
    "worker": check_worker,
    "backlog": check_backlog,
    "chat": check_chat,
}


def run_checks(*, detailed: Callable[[], bool] = lambda: True) -> dict[str, Any]:
    """`detailed` says whether the backlog's counts may be shown; asked only once the
    database answered (it reads the session), so an outage costs one wait, not two."""
    results: dict[str, str] = {}
    problems: list[str] = []
    for name, check in CHECKS.items():
        if name != "database" and results["database"] != "ok":
            results[name] = "not checked: no database"
            continue
        try:
            results[name] = check_backlog(detailed=detailed()) if name == "backlog" else check()
        except HealthProblem as exc:
            results[name] = str(exc)
            problems.append(f"{name}: {exc}")
        except DatabaseError as exc:
            # A broken connection would be reused by the next probe; drop it.
            connection.close()
            message = f"unreachable ({type(exc).__name__}: {str(exc).strip()[:200]})"
            results[name] = message
            problems.append(f"{name}: {message}")
    return {"status": "unhealthy" if problems else "ok", "checks": results, "problems": problems}


def may_see_counts(request: HttpRequest) -> bool:
    """Staff signed in, or a configured address. The session is read here by hand: this
    middleware runs before the session and the user are."""
    if request.META.get("REMOTE_ADDR", "") in settings.HEALTH_DETAIL_ADDRESSES:
        return True
    if settings.SESSION_COOKIE_NAME not in request.COOKIES:
        return False
    from importlib import import_module

    from django.contrib.auth import get_user

    engine = import_module(settings.SESSION_ENGINE)
    request.session = engine.SessionStore(request.COOKIES[settings.SESSION_COOKIE_NAME])
    user = get_user(request)
    return bool(user.is_active and user.is_staff)


def health_response(request: HttpRequest) -> JsonResponse:
    report = run_checks(detailed=lambda: may_see_counts(request))
    response = JsonResponse(report, status=503 if report["problems"] else 200)
    response["Cache-Control"] = "no-store"
    if report["problems"]:
        logger.warning("unhealthy: %s", "; ".join(report["problems"]))
        # Django would log every unhealthy probe again as an ERROR without the reason.
        response._has_been_logged = True  # type: ignore[attr-defined]
    return response


@sync_and_async_middleware
def health_check_middleware(
    get_response: Callable[[HttpRequest], Any],
) -> Callable[[HttpRequest], Any]:
    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> HttpResponse:
            if request.path == HEALTH_PATH:
                return await sync_to_async(health_response)(request)
            response: Awaitable[HttpResponse] = get_response(request)
            return await response

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        if request.path == HEALTH_PATH:
            return health_response(request)
        response: HttpResponse = get_response(request)
        return response

    return middleware
