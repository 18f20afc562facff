"""Ask a recorded question again: ``python run.py reask REC --fish N --tick T [--base-url … --model … --n K]``.

The recording keeps every model exchange (:mod:`mirofish.brains.exchanges`); this rebuilds
the request a fish's model was sent at tick ``T`` — the same messages and schema, byte for
byte (the schema's properties in the order sent; recordings made before kept them sorted) —
sends it ``K`` times to the recorded server and model or to another, and reads each answer the
way the brain does (:func:`~mirofish.brains.prompt.judge_reply`): the recorded answer beside
the new ones, the goals they chose and whether each was legal for the view the fish had, and
whether each is the same decision (goal, direction, horizon, thought) and the same text.
Against a deterministic server and the same model the answer comes back as
recorded; another model shows how its choice differs.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..brains.exchanges import formats_of, messages_of
from ..brains.prompt import PlanReply, judge_reply
from ..brains.prompts import recorded_prompt
from ..brains.user import one_line
from ..config import Config, redact_url
from ..fish.plans import DEFAULT
from ..grid import grid_of
from ..observe.recording import Recording, RecordingError

if TYPE_CHECKING:
    import concurrent.futures

    from ..fish.perception import Perception
    from .trust import ReaderChoice


def find_exchange(rec: Recording, fish: int, tick: int) -> dict[str, Any]:
    """The decision exchange of ``fish`` at ``tick`` (applied or asked there), or a one-line error
    naming the nearest ticks where it has one."""
    if not 0 <= fish < rec.config.fish.slots:
        raise RecordingError(f"--fish {fish} does not exist (this tank has fish 0..{rec.config.fish.slots - 1})")
    calls = [c for c in rec.model_calls(fish=fish) if c["kind"] == "decision"]
    if not calls and rec.config.brain.kind == "instinct" and not rec.config.fish.groups:
        raise RecordingError(f"{rec.path} is a run of the instinct brain: no model was asked")
    if not calls:
        raise RecordingError(f"fish {fish} has no recorded model exchange in {rec.path} (recorded with "
                             f"record.model_calls = false, or made before exchanges were kept)")
    here = [c for c in calls if tick in (c["tick"], c["asked"])]
    if not here:
        near = sorted({c["tick"] for c in calls}, key=lambda t: (abs(t - tick), t))[:5]
        raise RecordingError(f"fish {fish} asked its model at no tick {tick}; nearest: "
                             f"{', '.join(f't{t}' for t in sorted(near))}")
    return here[-1]


def _reading(text: str | None, view: str, plans: bool, food_here: bool, cfg: Config | None = None) -> dict[str, Any]:
    """A reply read as the brain reads it, by the plan table on the tank's grid (``cfg``'s)."""
    table = DEFAULT.on(grid_of(cfg.world.grid)) if cfg is not None else DEFAULT
    reply, read = judge_reply(text, view, plans, food_here, table=table)
    out: dict[str, Any] = {"reply": text, "read": read, "legal": read == "ok"}
    if isinstance(reply, PlanReply):
        out["choice"] = reply.goal + (f" {reply.direction}" if reply.goal == "explore" and reply.direction else "")
        out["ticks"] = reply.ticks
        out["thought"] = reply.thought
    elif reply is not None:
        out["choice"] = reply.action
        out["thought"] = reply.thought
    return out


NO_SERVER = ("give the server to ask with --base-url URL (and --api-key-env VAR for its key): a recording's "
             "server is never contacted, nor a key sent, because the file names them")


def ask_exchange(call: dict[str, Any], texts: dict[str, str], cfg: Config, base_url: str | None = None,
                 model: str | None = None, n: int = 1, timeout_s: float = 60.0,
                 plain: bool = False, api_key_env: str | None = None) -> list[dict[str, Any]]:
    """Send exchange ``call`` (its shared texts in ``texts``) again ``n`` times to ``base_url``
    — the user's, required: a recording is data (:mod:`~.trust`) — and ``model`` (default: the
    recorded one), with the key in ``api_key_env`` (default ``OPENAI_API_KEY``, never a variable
    the recording names); each answer read as the brain reads it. Blocks; never raises for a
    server's failure (the answer says it)."""
    from ..brains.transport import Endpoint, Failure, LoopThread, Transport, TransportSettings
    from ..config import EndpointConfig
    from .trust import DEFAULT_KEY_ENV

    url = base_url
    if not url:
        raise RecordingError(NO_SERVER)
    plans = cfg.brain.decides == "plan"
    view = call.get("view") or "\n".join(str(call.get("user", "")).split("\n")[1:6])
    food_here = "\nhere: food" in call["user"] or "food under you" in call["user"]
    try:
        msgs, formats = messages_of(call, texts), formats_of(call, texts)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a damaged file's exchange
        raise RecordingError(f"recording is damaged (the exchange's shared text {one_line(exc, 40)} is missing or "
                             f"unreadable): the request cannot be rebuilt") from None
    if plain:  # a question: the answer is text, not a decision
        formats = None
    ask_model = model or call["model"]
    answers: list[dict[str, Any]] = []
    thread = LoopThread("mirofish-reask")
    try:
        async def run() -> None:
            import asyncio

            settings = TransportSettings.of(cfg.brain, seed=cfg.seed, request_timeout_s=timeout_s, max_retries=1)
            transport = Transport(settings, asyncio.get_running_loop())
            ep = Endpoint(EndpointConfig(base_url=url, model=ask_model, max_concurrency=1))
            transport.connect(ep, api_key_env or DEFAULT_KEY_ENV)
            try:
                for _ in range(n):
                    trace: dict[str, Any] = {}
                    # each answer's whole deadline, retries and a server's Retry-After included
                    budget_end = asyncio.get_running_loop().time() + timeout_s
                    try:
                        text, p, c = await transport.complete([ep], msgs, formats, call["max_tokens"], budget_end,
                                                              trace=trace)
                        read = {"reply": text} if plain else _reading(text, view, plans, food_here, cfg)
                        answers.append({**read, "model": ask_model,
                                        "prompt_tokens": p, "completion_tokens": c,
                                        "latency_s": round(trace.get("latency_s", 0.0), 3)})
                    except Failure as failure:
                        answers.append({"reply": None, "read": failure.reason, "legal": False, "model": ask_model})
            finally:
                await transport.close()

        try:
            thread.run(run(), timeout=n * (timeout_s + 5) + 10)
        except TimeoutError:  # (never expected: every answer has its own deadline)
            raise RecordingError(f"the server at {redact_url(url)} gave no answer within {timeout_s:g} s") from None
    finally:
        thread.close()
    return answers


def reask(path: str | Path, fish: int, tick: int, base_url: str | None = None, model: str | None = None,
          n: int = 1, timeout_s: float = 60.0, api_key_env: str | None = None) -> dict[str, Any]:
    """Send fish ``fish``'s recorded request of tick ``tick`` again, ``n`` times; return the
    recorded answer and the new ones, read as the brain reads them (JSON-ready)."""
    rec = Recording(path)
    try:
        call = find_exchange(rec, fish, tick)
        texts = rec.texts()
        cfg = rec.config.for_group(rec.config.fish.group_of()[fish])  # its group's server, key and sampling
        prompt = recorded_prompt(rec.header, rec.config, fish)
    finally:
        rec.close()
    answers = ask_exchange(call, texts, cfg, base_url, model, n, timeout_s, api_key_env=api_key_env)
    plans = cfg.brain.decides == "plan"
    food_here = "\nhere: food" in call["user"] or "food under you" in call["user"]
    recorded = _reading(call["reply"], call["view"], plans, food_here, cfg)
    recorded["read"] = call["read"]  # as the run read it (a reply that never came has none)
    # the same decision (goal, direction, horizon, thought as read); the same text, byte for byte, apart
    decision = ("choice", "ticks", "thought")
    same = sum(1 for a in answers if a.get("choice") is not None
               and all(a.get(k) == recorded.get(k) for k in decision))
    same_text = sum(1 for a in answers if a.get("reply") == call["reply"])
    recorded_eps = cfg.brain.small.endpoints or cfg.brain.large.endpoints
    url = base_url or recorded_eps[0].base_url
    return {
        "recording": str(path), "fish": fish, "tick": call["tick"], "asked_at": call["asked"],
        "recorded": {**recorded, "model": call["model"], "endpoint": call["endpoint"], "tier": call["tier"]},
        "asked": {"model": model or call["model"], "endpoint": redact_url(url), "times": n},
        "answers": answers,
        "same_as_recorded": same, "same_text_as_recorded": same_text,
        "choices": dict(Counter(a.get("choice", a["read"]) for a in answers)),
        "legal": sum(1 for a in answers if a["legal"]),
        "view": call["view"], "message": call["user"],
        "prompt": {k: prompt[k] for k in ("name", "hash")} if prompt else None,
    }


def render_reask(r: dict[str, Any]) -> str:
    """``reask``'s text output."""
    rec = r["recorded"]
    pr = r.get("prompt")
    lines = [f"fish {r['fish']} at t{r['tick']} saw (prompt {pr['name']} {pr['hash']}):" if pr
             else f"fish {r['fish']} at t{r['tick']} saw:", "  " + r["message"].replace("\n", "\n  "),
             f"recorded ({rec['model']} at {rec['endpoint']}): {rec.get('choice', '-')}  [{rec['read']}]  "
             f"{rec['reply']!r}"]
    for k, a in enumerate(r["answers"], 1):
        lines.append(f"again #{k} ({r['asked']['model']}): {a.get('choice', '-')}  [{a['read']}]  {a['reply']!r}")
    n = r["asked"]["times"]
    lines.append(f"same decision as recorded: {r['same_as_recorded']}/{n} "
                 f"(same text {r['same_text_as_recorded']}/{n}); legal: {r['legal']}/{n}; choices: "
                 + ", ".join(f"{k} x{v}" for k, v in sorted(r["choices"].items())))
    return "\n".join(lines)


def interview(cfg: Config, perception: Perception, persona: str, plan: str, question: str,
              timeout_s: float = 60.0, choice: ReaderChoice | None = None) -> concurrent.futures.Future[dict[str, Any]]:
    """Ask a fish of a recorded or forked model run a question, with the context it has at the
    tick shown (its view, memories, plan), from the server the user gave (``choice``) — for sessions whose
    source has no model pool (a replay). A ``concurrent.futures.Future`` of ``{"text", "error"}``;
    never blocks."""
    import concurrent.futures

    from ..brains.prompt import interview_messages

    msgs = interview_messages(perception, persona, plan, question)
    call = {"model": (cfg.brain.small.endpoints or cfg.brain.large.endpoints)[0].model, "user": msgs[1]["content"],
            "max_tokens": 120, "kind": "question", "view": perception.view}
    texts = {"q": msgs[0]["content"]}
    call["prefix"] = "q"

    def ask() -> dict[str, Any]:
        try:
            if choice is None or choice.base_url is None:
                raise RecordingError("no server to ask: open the replay with --base-url URL --model NAME "
                                     "(a recording's server is never contacted because the file names it)")
            answers = ask_exchange(call, texts, cfg, choice.base_url, choice.model, n=1, timeout_s=timeout_s,
                                   plain=True, api_key_env=choice.api_key_env)
        except RecordingError as exc:
            return {"text": None, "error": str(exc)}
        a = answers[0]
        return {"text": (a.get("reply") or "").strip() or None, "error": None if a.get("reply") else a["read"]}

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mirofish-interview")
    future = pool.submit(ask)
    pool.shutdown(wait=False)
    return future
