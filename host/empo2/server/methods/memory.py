"""`memory.*`: list, get, add, update, delete, history of a run's tips.

Every call goes through MemoryAccess to the run's one store (the trainer's while it trains). A
person's change carries an author: the `author` param, else "you" (never the client program);
the names in records.RESERVED_AUTHORS belong to training and eviction.

Retried saves: `memory.add`, `memory.update` and `memory.delete` take an optional `editId`, chosen
by the client once per edit and sent again when it retries the same save (after a lost
connection it cannot know whether the first attempt arrived). The store applies an edit id once;
a repeat answers as a success with `replayed: true` and the tip as it is now, so the client shows
what the host recorded. The edit id is kept in the run's memory log, so this holds across host
restarts and resumed runs too.
"""

from __future__ import annotations

from contextlib import contextmanager

from ...memory.tips import (
    PERSON,
    POLICY,
    RESERVED_AUTHORS,
    EditAlreadyApplied,
    EditIdReused,
    TipDeleted,
    UnknownTip,
    VersionConflict,
    author_kind,
)
from ..transport.protocol import ProtocolError
from ..transport.wire import tip_json, tip_version_json
from .trajectory import DEFAULT_LIMIT, decode_cursor

UNNAMED_PERSON = "you"
EVERYTHING = 1 << 62


def _author(request, params: dict) -> dict:
    """The person the client names (the extension: the VS Code account's name), else "you":
    a person wrote it, never the client program."""
    name = params.get("author") or UNNAMED_PERSON
    if name in RESERVED_AUTHORS:
        raise ProtocolError(
            "InvalidParams", f"params.author '{name}' is reserved; name a person.", {"field": "params.author"}
        )
    return {"kind": PERSON, "name": name, "connection": request.connection.number}


def _not_found(params: dict) -> ProtocolError:
    return ProtocolError("TipNotFound", f"no tip {params['tipId']} in run '{params['runId']}'.")


def _conflict(params: dict, conflict: VersionConflict) -> ProtocolError:
    return ProtocolError(
        "VersionConflict",
        f"tip {params['tipId']} is at version "
        f"{conflict.current.version}, not {params['expectedVersion']}; reload it "
        "and edit again.",
        {"tip": tip_json(conflict.current)},
    )


@contextmanager
def _once(params: dict):
    """A retried save (its edit id applied already) as its recorded outcome; a reused id as
    InvalidParams. Yields a dict the caller fills with the result."""
    result: dict = {}
    try:
        yield result
    except EditAlreadyApplied as done:
        result.clear()
        result.update(tip=tip_json(done.tip), replayed=True)
    except EditIdReused as err:
        raise ProtocolError(
            "InvalidParams",
            f"params.editId is invalid ({err}); choose a new id for each edit.",
            {"field": "params.editId"},
        ) from None


@contextmanager
def _text_errors():
    """A text the store refuses (ValueError) as InvalidParams; a reused edit id stays _once's."""
    try:
        yield
    except EditIdReused:
        raise
    except ValueError as err:
        raise ProtocolError(
            "InvalidParams", f"params.text is invalid ({str(err)[:200]}).", {"field": "params.text"}
        ) from None


async def list_tips(request, params: dict) -> dict:
    """Newest first. Filters the store knows are applied and paged there; `task` and a
    person-author filter need every tip, so they are applied here."""
    wanted = params.get("filter", {})
    offset = decode_cursor(params.get("cursor"))
    limit = params.get("limit", DEFAULT_LIMIT)
    task, author = wanted.get("task"), wanted.get("author")
    here = task is not None or author == PERSON

    def listed(store):
        if store is None:
            return [], 0
        tips, total = store.list_tips(
            variation_key=wanted.get("variationKey"),
            search=params.get("search") or None,
            author=POLICY if author == POLICY else None,
            include_deleted=wanted.get("includeDeleted", False),
            include_evicted=wanted.get("includeEvicted", False),
            offset=0 if here else offset,
            limit=EVERYTHING if here else limit,
        )
        if here:
            tips = [
                t
                for t in tips
                if (task is None or t.variation_key.split("/")[0] == task)
                and (author != PERSON or author_kind(t.author) == PERSON)
            ]
            total = len(tips)
            tips = tips[offset : offset + limit]
        return [tip_json(t) for t in tips], total

    items, total = await request.host.memory.use(params["runId"], listed)
    end = offset + len(items)
    return {"items": items, "nextCursor": f"o{end}" if end < total else None, "total": total}


async def get_tip(request, params: dict) -> dict:
    def get(store):
        try:
            if store is None:
                raise UnknownTip(params["tipId"])
            return {"tip": tip_json(store.get(params["tipId"]))}
        except UnknownTip:
            raise _not_found(params) from None

    return await request.host.memory.use(params["runId"], get)


async def add_tip(request, params: dict) -> dict:
    """A person's tip in a variation's buffer; retrievable from the next retrieval on. Without
    a score it is unscored (`score` null; it ranks at the top of the score scale)."""
    author = _author(request, params)

    def add(store):
        with _once(params) as result:
            with _text_errors():
                tip = store.add_tip(
                    params["variationKey"],
                    params["text"],
                    score=params.get("score"),
                    author=author["name"],
                    key_text=params.get("keyText"),
                    edit_id=params.get("editId"),
                )
            result["tip"] = tip_json(tip)
        return result

    return await request.host.memory.use(params["runId"], add, author=author, create=True)


def _existing(store, params: dict):
    """The run's store; a run without one has no tips at all."""
    if store is None:
        raise UnknownTip(params["tipId"])
    return store


@contextmanager
def _edit_errors(params: dict, deleted: str):
    """A versioned edit's store errors as protocol errors (one mapping for update and delete)."""
    try:
        yield
    except UnknownTip:
        raise _not_found(params) from None
    except VersionConflict as conflict:
        raise _conflict(params, conflict) from None
    except TipDeleted:
        raise ProtocolError("RunStateInvalid", f"tip {params['tipId']} {deleted}.") from None


async def update_tip(request, params: dict) -> dict:
    """A stale expectedVersion is VersionConflict carrying the tip as it is now."""
    author = _author(request, params)

    def update(store):
        with _once(params) as result, _edit_errors(params, "is deleted; it cannot be edited"):
            with _text_errors():
                tip = _existing(store, params).update(
                    params["tipId"],
                    params["text"],
                    expected_version=params["expectedVersion"],
                    author=author["name"],
                    edit_id=params.get("editId"),
                )
            result["tip"] = tip_json(tip)
        return result

    return await request.host.memory.use(params["runId"], update, author=author)


async def delete_tip(request, params: dict) -> dict:
    """The tip leaves retrieval at once; it stays readable, with its history."""
    author = _author(request, params)

    def delete(store):
        with _once(params) as result, _edit_errors(params, "is already deleted"):
            tip = _existing(store, params).delete(
                params["tipId"],
                expected_version=params["expectedVersion"],
                author=author["name"],
                edit_id=params.get("editId"),
            )
            result["tip"] = tip_json(tip)
        return result

    return await request.host.memory.use(params["runId"], delete, author=author)


async def history(request, params: dict) -> dict:
    def versions(store):
        try:
            if store is None:
                raise UnknownTip(params["tipId"])
            entries = store.history(params["tipId"])
        except UnknownTip:
            raise _not_found(params) from None
        return {"versions": [tip_version_json(e) for e in entries]}

    return await request.host.memory.use(params["runId"], versions)
