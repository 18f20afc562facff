"""Asking a fish: "why?" (the planner's reasons, and a model brain's own answer), a question
typed to it, and its last model request sent again — each answered without blocking the window.

The box holds what is shown (``why``) and the question being typed (``typing``); it asks the
session shown (``Session.explain``, ``Session.ask``) and a server
(:func:`mirofish.session.reask.ask_exchange`: a live tank's own, a recording's only the one the
user gave), and gives the lines the follow panel draws.
"""

from __future__ import annotations

import concurrent.futures

import pygame

from . import theme


class AskBox:
    def __init__(self) -> None:
        self.why: dict | None = None  # {"fish", "lines", "future", "question"} while shown
        self.typing: str | None = None  # a question being typed
        self.question: str | None = None  # the question the last key (Enter) sent

    def ask(self, session, fish: int, question: str) -> None:
        """The planner's reasons for ``fish``'s plan now, and with a model brain the model's
        own answer in the fish's persona (a Future: asked without blocking)."""
        self.why = {"fish": fish, "lines": session.explain(fish), "future": session.ask(fish, question),
                    "question": question}

    def again(self, fish: int, last: dict, cfg, recorded: bool = False, choice=None) -> None:
        """Send ``fish``'s last model request (``last["call"]``) again, as it was sent, and
        show the answer beside the one it got: a live tank's to its own server (the user's
        config); a recording's (``recorded``) only to the server the user gave (``choice``,
        ``replay --base-url``), never to the one the file names (session/trust.py)."""
        from ..session.reask import ask_exchange

        call = last["call"]
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mirofish-ask-again")
        cfg = cfg.for_group(cfg.fish.group_of()[fish])  # a mixed tank: the fish's group's server and key
        if recorded:
            url, model, key_env = (choice.base_url, choice.model, choice.api_key_env) if choice else (None, None, None)
        else:
            eps = cfg.brain.small.endpoints or cfg.brain.large.endpoints
            url, model = (eps[0].base_url if eps else None), None
            key_env = (eps[0].api_key_env if eps else None) or cfg.brain.api_key_env
        future = pool.submit(ask_exchange, call, call.get("_texts") or {}, cfg, url, model, 1, 60.0,
                             api_key_env=key_env)
        pool.shutdown(wait=False)
        self.why = {"fish": fish, "again": future, "call": call, "tick": last["tick"], "lines": [],
                    "future": None, "question": ""}

    def _again_lines(self, why: dict) -> list[tuple[str, tuple]]:
        call, fut = why["call"], why["again"]
        out = [(f"Asked again: its request of t{why['tick']} (G again, Esc closes)", theme.INK),
               (f"it got: {call.get('reply')!r}  [{call.get('read')}]", theme.DIM)]
        if not fut.done():
            return [*out, (f"{call['model']} is thinking…", theme.WARN)]
        try:
            answer = fut.result()[0]
        except Exception as exc:  # noqa: BLE001 — a server that is gone is shown, not raised
            return [*out, (f"no answer: {exc}", theme.BAD)]
        same = answer.get("reply") == call.get("reply")
        colour = theme.ACCENT if answer["legal"] else theme.BAD
        out.append((f"now: {answer.get('reply')!r}  [{answer['read']}]", colour))
        out.append(("the same answer" if same else "a different answer", theme.GOOD if same else theme.WARN))
        return out

    def lines(self, selected: int | None) -> list[tuple[str, tuple]] | None:
        """What the follow panel shows for ``selected`` (None: nothing asked of it)."""
        why = self.why
        if why is None or why["fish"] != selected:
            return None
        if "again" in why:
            return self._again_lines(why)
        out = [("Why? (I asks again, Esc closes)", theme.INK)]
        out += [(line, theme.DIM) for line in why["lines"]]
        fut = why["future"]
        if fut is not None:
            out.append((f"you asked: {why['question']}", theme.FAINT))
            if not fut.done():
                out.append(("the model is thinking…", theme.WARN))
            else:
                answer = fut.result()
                out.append((f"\u201c{answer['text']}\u201d" if answer["text"] else
                            f"no answer ({answer['error']})", theme.ACCENT if answer["text"] else theme.BAD))
            if self.typing is None:
                out.append(("T: type your own question", theme.FAINT))
        elif why.get("typed"):  # the embedded brain has no words: its answer is its reasons
            out.append((f"you asked: {why['question']}", theme.FAINT))
            out.append(("the embedded brain does not talk: the reasons above are its whole answer "
                        "(a model brain answers in the fish's words)", theme.DIM))
        if self.typing is not None:
            out.append((f"ask: {self.typing}_", theme.INK))
        return out

    def handle(self, event) -> bool:
        """While a question is typed every key is the box's: Enter sends it (:attr:`question`)
        and ends typing, Esc cancels, every other key is text."""
        self.question = None
        if self.typing is None or event.type != pygame.KEYDOWN:
            return False
        if event.key == pygame.K_RETURN:
            question, self.typing = self.typing.strip(), None
            self.question = question or None
        elif event.key == pygame.K_ESCAPE:
            self.typing = None
        elif event.key == pygame.K_BACKSPACE:
            self.typing = self.typing[:-1]
        elif event.unicode and event.unicode.isprintable() and len(self.typing) < 160:
            self.typing += event.unicode
        return True
