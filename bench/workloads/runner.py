"""Run one workload against one target and turn whatever happens into exactly one Result."""
from __future__ import annotations

import gc
import re

import pymongo.errors

from ..results import ERROR, NOT_APPLICABLE, OK, SKIPPED, TIMEOUT, UNSUPPORTED, WRONG, Result
from ..timing import HardTimeout, hard_deadline
from .base import Checker, Context, Workload
from .loading import build_indexes, load_documents

#: MongoDB codes meaning "this server does not do that": CommandNotFound, CommandNotSupported,
#: NotImplemented, unrecognized pipeline stage.
UNSUPPORTED_CODES = {59, 115, 238, 40324}
UNSUPPORTED_TEXT = re.compile(
    r"not (yet )?(supported|implemented)|unsupported|unrecogni[sz]ed|unknown (operator|command|"
    r"stage|top level operator)|no such cmd|is not a valid", re.IGNORECASE)


def hard_limit(budget: float) -> float:
    """One workload may overrun its budget (one slow operation) but not indefinitely."""
    return 3 * budget + 30


def load_limit(budget: float) -> float:
    return 10 * budget + 60


def run_workload(w: Workload, ctx: Context, repeat: int = 0) -> Result:
    def result(status: str, detail: str = "", **values) -> Result:
        return Result(ctx.target.name, w.id, ctx.ds.n, status, unit=w.unit, detail=detail,
                      repeat=repeat, **values)

    if w.durable_only and not ctx.target.durable:
        return result(NOT_APPLICABLE, "not durable (in-memory target)")
    # Garbage from the previous workload must not be collected on this one's clock (and montydb
    # keeps LMDB environments open until their cursors are collected).
    gc.collect()
    blocked = _prepare(w, ctx)
    if blocked:
        return result(SKIPPED, blocked)
    ctx.check, ctx.notes = Checker(), []
    try:
        with hard_deadline(load_limit(ctx.budget) if w.id == "W1" else hard_limit(ctx.budget)):
            sample = w.run(ctx)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - every outcome becomes a Result
        _after_failure(w, ctx, exc)
        return result(*classify(exc))
    notes = list(ctx.notes)
    missing = [f for f in w.uses_index if f not in ctx.indexed_fields]
    if missing:
        notes.append(f"no index on {', '.join(missing)}" + (f" ({ctx.index_error})" if ctx.index_error else ""))
    if ctx.check.failures:
        return result(WRONG, "; ".join([ctx.check.summary(), *notes]), rate=sample.rate,
                      ops=sample.ops, seconds=sample.seconds)
    return result(OK, "; ".join(notes), rate=sample.rate, ops=sample.ops, seconds=sample.seconds)


def classify(exc: BaseException) -> tuple[str, str]:
    """(status, detail) for an exception raised by a target or a timeout."""
    # object addresses ("<function f at 0x7f...>") would make identical failures look different
    first_line = re.sub(r" at 0x[0-9a-f]+", "", (str(exc).strip().splitlines() or [""])[0])[:240]
    detail = f"{type(exc).__name__}: {first_line}"
    if isinstance(exc, HardTimeout):
        return TIMEOUT, first_line
    if isinstance(exc, (NotImplementedError, AttributeError)) or "NotImplemented" in type(exc).__name__:
        return UNSUPPORTED, detail
    if isinstance(exc, pymongo.errors.OperationFailure) and exc.code in UNSUPPORTED_CODES:
        return UNSUPPORTED, detail
    if UNSUPPORTED_TEXT.search(first_line):
        return UNSUPPORTED, detail
    return ERROR, detail


def _prepare(w: Workload, ctx: Context) -> str:
    """Untimed setup the workload depends on; returns why it cannot run, or ''."""
    if w.needs_data and not ctx.data_ready:
        if ctx.setup_error:
            return ctx.setup_error
        ctx.check = Checker()
        try:
            with hard_deadline(load_limit(ctx.budget)):
                load_documents(ctx, budget=0.0)
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            ctx.setup_error = "could not load the data set: " + classify(exc)[1]
            return ctx.setup_error
        if ctx.check.failures:
            ctx.notes.append("setup: " + ctx.check.summary())
    if w.uses_index and not ctx.index_attempted:
        ctx.check = Checker()
        try:
            with hard_deadline(hard_limit(ctx.budget)):
                build_indexes(ctx)
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            ctx.index_error = "create_index: " + classify(exc)[1]
    return ""


def _after_failure(w: Workload, ctx: Context, exc: BaseException) -> None:
    """Keep later workloads meaningful after a failure (never retry a half-done load)."""
    if w.id == "W1" and not ctx.data_ready:
        ctx.setup_error = "W1 (loading) failed: " + classify(exc)[1]
    if w.id == "W3":
        ctx.index_error = "W3: " + classify(exc)[1]
    if ctx.target.client is None:  # e.g. W13 closed the client and could not reopen
        try:
            ctx.target.open()
        except Exception as reopen_exc:  # noqa: BLE001
            ctx.setup_error = "target could not be reopened: " + classify(reopen_exc)[1]
            ctx.data_ready = False
