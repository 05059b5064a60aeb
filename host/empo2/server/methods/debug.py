"""`debug.*`: play one episode turn by turn for VS Code's debugger (docs/debugging.md).

    debug.start   launch a session (a run's checkpoint or a policy folder, task, variation,
                  seed, mode, temperature, optionally a recorded episode to replay)
    debug.step    one token of the current turn, or the rest of the turn ("finish")
    debug.force   execute a given action as the next turn
    debug.replayTurn  rewind to before turn k and play it again (tips as they are now)
    debug.state   every turn so far and the pending one
    debug.stop    end the session

The debug package (and torch) is imported in a handler thread when first needed (HostServer.load):
an idle host starts without it, and the import never stalls the loop.
"""

from __future__ import annotations

from ...modes import MEMORY
from ..runs.run_manager import sentence
from ..runs.stored_run import ACTIVE
from ..transport.protocol import ProtocolError, param_defaults


async def start(request, params: dict) -> dict:
    host, runs, sessions = request.host, request.host.runs, request.host.debug
    sessions.check_room()
    run = runs.folder(params["runId"]) if "runId" in params else None
    record, record_run = None, None
    if "replay" in params:
        record_run = runs.folder(params["replay"]["runId"])
        record = await host.blocking(record_run.trajectory, params["replay"]["episodeId"])
        if record is None:
            raise ProtocolError(
                "EpisodeNotFound", f"no episode {params['replay']['episodeId']} in run '{params['replay']['runId']}'."
            )
    elif "task" not in params or "variation" not in params:
        raise ProtocolError(
            "InvalidParams",
            "params.task and params.variation are required unless params.replay names a recorded episode.",
            {"field": "params.task"},
        )
    policy = params.get("policyPath")
    if policy is not None and policy != "builtin":
        policy = str(runs.inside_roots(policy))
    if policy is None and run is None:
        if record_run is None:
            raise ProtocolError(
                "InvalidParams",
                "name a run (params.runId) or a policy folder (params.policyPath) to debug.",
                {"field": "params.runId"},
            )
        run = record_run  # replaying with the checkpoint of the episode's own run
    defaults = param_defaults("DebugStartParams")
    mode = params.get("mode", defaults["mode"])
    memory_run = (
        params.get("memoryRunId") or (run.run_id if run else None) or (record_run.run_id if record_run else None)
    )
    if mode == MEMORY and record is None and memory_run is None:
        raise ProtocolError(
            "InvalidParams",
            "memory mode needs a run whose tips to read (params.memoryRunId).",
            {"field": "params.memoryRunId"},
        )
    if memory_run is not None:
        runs.folder(memory_run)  # RunNotFound now, not at the first step

    launching = await host.load("empo2.debug.launch")
    Launch, LaunchError = launching.Launch, launching.LaunchError

    launch = Launch(
        task=params.get("task"),
        variation=params.get("variation"),
        seed=params.get("seed", defaults["seed"]),
        mode=mode,
        temperature=params.get("temperature"),
        device=params.get("device", defaults["device"]),
        run=run,
        checkpoint=params.get("checkpoint"),
        policy_path=policy,
        record=record,
        record_run=record_run,
    )
    try:
        embedder = await host.blocking(host.embedder)  # made on first use: seconds
        session, info = await host.blocking(launching.open_session, launch, embedder)
    except LaunchError as err:
        raise ProtocolError(err.kind, str(err)) from None
    live = runs.live
    ours = live is not None and run is not None and live.folder.path == run.path and live.state in ACTIVE
    info["runState"] = live.state if ours else None
    info["alongsideTraining"] = ours and live.state != "paused"  # a paused trainer holds its weights
    entry = sessions.add(request.connection.number, session, info, memory_run)
    return {"session": _session_json(entry)}


async def step(request, params: dict) -> dict:
    unit = params.get("unit", "turn")
    return await _act(request, params, lambda s, store: s.step(unit, store))


async def force(request, params: dict) -> dict:
    action = params["action"]
    if not action.strip():
        raise ProtocolError("InvalidParams", "params.action must hold an action.", {"field": "params.action"})
    return await _act(request, params, lambda s, store: (s.force(action, store), True))


async def replay_turn(request, params: dict) -> dict:
    index = params["turn"]

    def replay(s, store):
        previous = s.rewind(index)
        turn, executed = s.step("turn", store)
        return turn, executed, previous

    return await _act(request, params, replay)


async def state(request, params: dict) -> dict:
    entry = request.host.debug.get(params["sessionId"], request.connection.number)
    async with entry.lock:
        session = entry.session
        return {
            "session": _session_json(entry),
            "turns": [turn_json(t) for t in session.turns],
            "pending": turn_json(session.pending.turn) if session.pending else None,
            "revealed": session.pending.revealed if session.pending else 0,
            "episode": _episode_json(session),
        }


async def stop(request, params: dict) -> dict:
    request.host.debug.remove(params["sessionId"], request.connection.number)
    return {"stopped": True}


async def _act(request, params: dict, fn) -> dict:
    host = request.host
    entry = host.debug.get(params["sessionId"], request.connection.number)
    DebugStateError = (await host.load("empo2.debug.session")).DebugStateError

    async with entry.lock:
        store = None
        if entry.session.spec.mode == MEMORY and entry.memory_run is not None:
            # The run's one store (the trainer's while it trains); retrieval only reads it.
            store = await host.memory.use(entry.memory_run, lambda s: s)
        try:
            result = await host.blocking(fn, entry.session, store)
        except DebugStateError as err:
            raise ProtocolError("DebugStateInvalid", sentence(err)) from None
        turn, executed, *previous = result
        session = entry.session
        answer = {
            "turn": turn_json(turn),
            "executed": executed,
            "revealed": len(turn.tokens) if executed else session.pending.revealed,
            "episode": _episode_json(session),
        }
        if previous:
            answer["previous"] = turn_json(previous[0]) if previous[0] is not None else None
        return answer


def _session_json(entry) -> dict:
    return {"sessionId": entry.id, "memoryRunId": entry.memory_run, **entry.info}


def _episode_json(session) -> dict:
    last = session.turns[-1] if session.turns else None
    return {
        "turns": len(session.turns),
        "done": session.done,
        "success": bool(last.success) if last else False,
        "score": last.score if last and last.score is not None else 0.0,
        "observation": session.observation,
        "replaying": session.replaying,
        "firstObservation": session.first_observation,
        "observationMismatch": session.observation_mismatch,
    }


def turn_json(turn) -> dict:
    """A debug Turn as the protocol's DebugTurn (schema: DebugTurn)."""
    tokens = [
        {
            "index": j,
            "id": t.id,
            "text": t.text,
            "logprob": t.logprob,
            "logprobNoTips": t.logprob_no_tips,
            "alternatives": [{"id": i, "text": s, "logprob": lp} for i, s, lp in t.alternatives],
            "ratio": t.ratio,
            "masked": t.masked,
        }
        for j, t in enumerate(turn.tokens)
    ]
    return {
        "index": turn.index,
        "observation": turn.observation,
        "prompt": turn.prompt,
        "promptNoTips": turn.user_text,
        "tips": [
            {"id": i, "text": x, "similarity": sim, "score": sc}
            for i, x, sim, sc in zip(turn.tip_ids, turn.tips, turn.tip_similarity, turn.tip_score)
        ],
        "action": turn.action,
        "executedAction": turn.executed_action if turn.executed else None,
        "corrected": turn.corrected,
        "forced": turn.forced,
        "executed": turn.executed,
        "tokens": tokens,
        "minLogprob": turn.min_logprob,
        "greedyDiffers": turn.greedy_differs,
        "reward": turn.reward,
        "score": turn.score,
        "intrinsic": turn.intrinsic,
        "scoreChanged": bool(turn.reward) if turn.executed else False,
        "nextObservation": turn.next_observation,
        "done": turn.done,
        "success": turn.success,
        "replay": turn.replay,
    }
