"""Running the referential game: embedded learning agents, conditions, metrics, round logs.

**Embedded agents** learn a code from feedback alone — no dictionary is built in:

* The *sender* names each attribute value of the target with a term: it reuses the glossary's
  term with the best stable score for that value, and invents a new two-letter term (a random
  consonant-vowel syllable) when none exists — or, with a small exploration probability that
  decays over the rounds, as a rival synonym. Messages are the terms in a row ("kamoti").
* The *receiver* knows nothing at first. It learns cross-situationally: after each round it
  sees the target and credits every term of the message with every attribute value of the
  target; a term's true meaning is the one that keeps co-occurring. It picks the candidate the
  message's terms fit best (log-probabilities, smoothed) and reports its interpretation of
  each term, which the glossary compares with the sender's definition.

Conditions: ``dynamic`` (the above), ``fixed`` (a glossary given in advance,
no invention), ``natural`` (the sender spells the target out — the length and token
baseline; its receiver is the same learning listener, reading words instead of terms, so
the baseline has to be understood too rather than string-matched).
A receiver that gives no interpretation of the message loses the round even if its pick was
right. A success-drop alarm fires when the rolling success rate falls ``alarm_drop`` below its
best; with ``review`` on, new terms wait as ``pending`` until a person approves them.
Three agents (§8.1): a third agent joins half-way with the existing glossary; from then on a
new term enters the shared glossary only when a majority of the agents interpret it as its
sender defined it.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np

from .game import Game, GameConfig, GameObject, Round, distinguishing
from .glossary import Glossary, Meaning

CONSONANTS, VOWELS = "bdfgklmnprstvz", "aeiou"
TERM_LEN = 2


class Agent(Protocol):
    """A player: the embedded learner below, or a model agent (``model_agents.py``). What else
    an agent may have is looked up by name — ``learn``, ``interpretation``, ``learn_glossary``,
    ``bind``, ``close``, ``made``, ``client``, ``last_raw`` — and skipped when it has not."""

    def speak(self, target: GameObject, round_: int, explore: float, invent: bool, status: str,
              candidates: list[GameObject] | None = None) -> tuple[str, list[str], list[str]]: ...

    def listen(self, message: str, candidates: list[GameObject]) -> tuple[str | None, dict[str, Any]]: ...


class EmbeddedAgent:
    """Sender and receiver in one: it speaks through the shared glossary and learns to listen."""

    def __init__(self, name: str, game: Game, glossary: Glossary, rng: np.random.Generator):
        self.name, self.game, self.glossary, self.rng = name, game, glossary, rng
        self.assoc: dict[str, dict[tuple[str, str], float]] = defaultdict(lambda: defaultdict(float))
        self.combos: dict[tuple[tuple[str, str], ...], int] = {}  # how often each combination of values had to be named

    # ------------------------------------------------------------ speaking

    def _invent(self, canonical: Meaning | None = None) -> str | None:
        """A new term not in the glossary yet: a two-letter syllable (None when all 70 are
        taken), or — ``coin = "initials"`` — the first two letters of each value it names
        (``bl``, ``blci``), a letter more each time that is taken, then a number (``re2``)."""
        if self.game.cfg.coin == "initials" and canonical:
            words = [str(v).lower() for v in canonical.values()]
            for k in range(2, max(len(w) for w in words) + 1):
                term = "".join(w[:k] for w in words)
                if term not in self.glossary:
                    return term
            base = "".join(w[:2] for w in words)
            return next(f"{base}{n}" for n in range(2, 10**6) if f"{base}{n}" not in self.glossary)
        free = [c + v for c in CONSONANTS for v in VOWELS if c + v not in self.glossary]
        if not free and self.game.cfg.templates:  # one term a message: two syllables once single ones run out
            free = [a + b for a in (c + v for c in CONSONANTS for v in VOWELS)
                    for b in (c + v for c in CONSONANTS for v in VOWELS) if a + b not in self.glossary]
            return free[int(self.rng.integers(len(free)))] if free else None
        if not free:
            return None
        for _ in range(1000):
            term = "".join([CONSONANTS[int(self.rng.integers(len(CONSONANTS)))],
                            VOWELS[int(self.rng.integers(len(VOWELS)))]])
            if term not in self.glossary:
                return term
        return free[0]

    COMBINE_AFTER = 3  # a combination of values needed this often gets a term of its own

    def speak(self, target: GameObject, round_: int, explore: float, invent: bool, status: str,
              candidates: list[GameObject] | None = None) -> tuple[str, list[str], list[str]]:
        """The message for ``target``: with the game's ``context`` on, only the attributes that
        tell it apart from ``candidates`` (fewest first), and one term for a combination of
        values once that combination keeps being needed; each value by its best term,
        reused before invented."""
        props = target.properties(self.game.names)
        need = distinguishing(target, candidates, self.game.names) if candidates and self.game.cfg.context \
            else list(props)
        wanted = {a: props[a] for a in need}
        terms: list[str] = []
        new: list[str] = []
        if self.game.cfg.templates:  # one term for the template: these values, whatever the rest
            term = self._term_for(wanted, round_, explore, invent, status, new, invent_now=True,
                                  example=target.detail)
            return (term, [term], new) if term is not None else ("", [], new)
        if len(wanted) == 2 and self.game.cfg.combine:  # (a term for all three values would be a name per object)
            combo = self._term_for(wanted, round_, explore, invent, status, new,
                                   invent_now=self._needed(wanted) >= self.COMBINE_AFTER)
            if combo is not None:
                return combo, [combo], new
        for attr, value in wanted.items():
            term = self._term_for({attr: value}, round_, explore, invent, status, new, invent_now=True)
            if term is not None:
                terms.append(term)
        return "".join(terms), terms, new

    def _needed(self, wanted: Meaning) -> int:
        key = tuple(sorted(wanted.items()))
        self.combos[key] = self.combos.get(key, 0) + 1
        return self.combos[key]

    def _term_for(self, canonical: Meaning, round_: int, explore: float, invent: bool, status: str, new: list[str],
                  invent_now: bool, example: str | None = None) -> str | None:
        """The best known term for ``canonical`` (one value or a combination), or a new one."""
        known = self.glossary.terms_for(canonical)
        known += [t for t in self.glossary.terms_for(canonical, ("proposed", "pending")) if t.proposed_by == self.name]
        if known and not (invent and self.rng.random() < explore):
            return max(known, key=lambda t: (t.stable_score, t.usage, t.term)).term
        term = self._invent(canonical) if invent and invent_now else None
        if term is not None:
            self.glossary.add(term, canonical, canonical, round_, status=status, proposed_by=self.name,
                              example=example or None)
            new.append(term)
            return term
        return known[0].term if known else None

    # ------------------------------------------------------------ listening

    def interpretation(self, term: str) -> Meaning | None:
        """What the term means to this agent: its most frequent value, and — once there is
        evidence (3 rounds) — every other value that came with it nearly as often (a
        combination term's)."""
        counts = self.assoc.get(term)
        if not counts:
            return None
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        (attr, value), top = ranked[0]
        out = {attr: value}
        for (a, v), c in ranked[1:]:
            if c >= 3 and c >= 0.9 * top and a not in out:
                out[a] = v
        return dict(sorted(out.items()))

    def split(self, message: str) -> list[str]:
        """A message's units: words in the natural baseline, the one template term with
        ``templates``, two-letter terms otherwise."""
        if self.game.cfg.condition == "natural":
            return message.split()
        if self.game.cfg.templates:
            return [message] if message else []
        return [message[i : i + TERM_LEN] for i in range(0, len(message), TERM_LEN)]

    def listen(self, message: str, candidates: list[GameObject]) -> tuple[str, dict[str, Meaning | None]]:
        terms = self.split(message)
        n_values = sum(len(v) for v in self.game.cfg.attributes.values())
        scores = np.zeros(len(candidates))
        for term in terms:
            counts = self.assoc.get(term)
            if not counts:
                continue
            total = sum(counts.values())
            for k, c in enumerate(candidates):
                props = c.properties(self.game.names)
                mass = sum(v for (a, val), v in counts.items() if props.get(a) == val)
                scores[k] += math.log((mass + 0.1) / (total + 0.1 * n_values))
        best = np.flatnonzero(scores == scores.max())
        choice = candidates[int(best[int(self.rng.integers(best.size))])]
        return choice.id, {t: self.interpretation(t) for t in terms}

    def learn(self, message: str, target: GameObject) -> None:
        """Feedback: the target is revealed; every term is credited with its attribute values."""
        props = target.properties(self.game.names)
        for term in self.split(message):
            for attr, value in props.items():
                self.assoc[term][(attr, value)] += 1.0

    def learn_glossary(self, weight: float = 3.0) -> None:
        """Join with the existing glossary: take its agreed meanings as prior experience."""
        for t in self.glossary.active():
            for attr, value in (t.by_receiver or t.canonical).items():
                self.assoc[t.term][(attr, value)] += weight


class Experiment:
    """A run of the referential game; ``run()`` returns the summary JSON of the CLI."""

    def __init__(self, cfg: GameConfig, glossary_path: str | Path | None = None, log_path: str | Path | None = None,
                 agents: str = "embedded", model_agent_factory: Callable[[str], Agent] | None = None):
        self.cfg, self.agents_kind = cfg, agents
        self.game = Game(cfg)
        self.glossary = Glossary(glossary_path or ":memory:", model="embedded" if agents == "embedded" else "llm")
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([cfg.seed, 1])))
        self.failures: dict[str, int] = defaultdict(int)
        make: Callable[[str], Agent] = model_agent_factory or (
            lambda name: EmbeddedAgent(name, self.game, self.glossary, self.rng))
        self.agents = [make("A"), make("B")]
        for a in self.agents:
            if hasattr(a, "learn_glossary"):
                a.learn_glossary()  # a restart starts from what the glossary already holds
        self.joiner = make("C") if cfg.agents == 3 else None
        for a in self.agents + ([self.joiner] if self.joiner else []):
            bind = getattr(a, "bind", None)
            if bind is not None:  # model agents get the game, glossary and failure counters
                bind(self.game, self.glossary, self.failures)
        self.join_round = cfg.rounds // 2 if cfg.agents == 3 else cfg.rounds + 1  # (never, with two agents)
        if cfg.condition == "fixed":
            self._fixed_glossary()
        self.rounds: list[Round] = []
        self.success: list[float] = []
        self.lengths: list[tuple[int, int]] = []  # (message chars, natural description chars)
        self.new_per_round: list[int] = []
        self.instances: dict[str, set[tuple[str, str]]] = defaultdict(set)  # templates: term -> (object, detail) named
        self.pruned: list[str] = []
        self.tokens: list[int] = []  # per round: the tokens model agents' server counted (prompts and replies)
        self.alarms: list[dict[str, float]] = []  # success-drop alarms: {"round", "best", "now"}
        self._alarm_on, self._best_rolling = False, 0.0
        self.log: IO[str] | None = open(log_path, "w") if log_path else None  # noqa: SIM115 — open for the run, closed by close()
        self.run_id = f"seed{cfg.seed}-{cfg.condition}-{agents}"
        self.offset = self.glossary.rounds_played  # a restarted glossary keeps counting rounds
        self.watch: Callable[[dict[str, Any]], None] | None = None  # each round's record, as --log writes it

    def _fixed_glossary(self) -> None:
        """The fixed-glossary condition: one agreed term per value, given to every agent (with
        ``templates``: one per template, every combination of values of one or more attributes)."""
        if self.cfg.templates:
            from itertools import combinations, product

            names = list(self.cfg.attributes)
            for k in range(1, len(names) + 1):
                for attrs in combinations(names, k):
                    for combo in product(*(self.cfg.attributes[a] for a in attrs)):
                        schema = dict(zip(attrs, combo))
                        if not self.glossary.terms_for(schema):
                            term = self.agents[0]._invent(schema) if hasattr(self.agents[0], "_invent") else None
                            term = term or f"t{len(self.glossary._cache)}"
                            self.glossary.add(term, schema, schema, 0, proposed_by="fixed")
                            self.glossary.interpret(term, schema)
        for attr, values in ({} if self.cfg.templates else self.cfg.attributes).items():
            for value in values:
                if not self.glossary.terms_for({attr: value}):
                    term = (self.agents[0]._invent({attr: value}) if hasattr(self.agents[0], "_invent") else None) \
                        or f"{attr[0]}{value[0]}"
                    n = 1
                    while term in self.glossary:  # shape:square and size:small would both be "ss"
                        term, n = f"{attr[:2]}{value[:2]}{n if n > 1 else ''}", n + 1
                    self.glossary.add(term, {attr: value}, {attr: value}, 0, proposed_by="fixed")
                    self.glossary.interpret(term, {attr: value})
        for a in self.agents + ([self.joiner] if self.joiner else []):
            if hasattr(a, "learn_glossary"):
                a.learn_glossary(weight=50.0)

    @property
    def present(self) -> list[Agent]:
        if self.joiner is not None and len(self.rounds) >= self.join_round and self.joiner not in self.agents:
            if hasattr(self.joiner, "learn_glossary"):
                self.joiner.learn_glossary()
            self.agents.append(self.joiner)
        return self.agents

    def step(self) -> Round:
        """One round: the sender speaks, the receivers pick and learn, the glossary keeps score,
        and the round's record goes to the log and the watcher."""
        local = len(self.rounds)
        r = self.offset + local
        agents = self.present
        rnd = self.game.draw_round(r)
        sender = agents[local % len(agents)]
        receivers = [a for a in agents if a is not sender]
        spent = self._model_tokens()
        self._speak(rnd, sender, r, three=len(agents) == 3)
        problem = self.game.check_message(rnd.message)
        correct = [self._hear(rnd, receiver, problem) for receiver in receivers]
        rnd.success = bool(all(correct))
        self.success.append(float(np.mean(correct)))
        for term in rnd.used_terms:
            self._keep_score(term, rnd.success, r, receivers, len(agents))
        self._upkeep(r)
        self._account(rnd, spent)
        self.rounds.append(rnd)
        self._record(rnd, r, self._watch_success(r))
        return rnd

    def _speak(self, rnd: Round, sender: Agent, r: int, three: bool) -> None:
        """The sender's message for the round's target (the natural baseline spells it out)."""
        cfg = self.cfg
        if cfg.condition == "natural":
            rnd.message, rnd.used_terms, rnd.new_terms = rnd.target.describe(tuple(self.game.names)), [], []
        else:
            explore = 0.25 * math.exp(-r / 40.0) if cfg.condition == "dynamic" else 0.0
            status = "proposed" if three else "pending" if cfg.review else "active"
            rnd.message, rnd.used_terms, rnd.new_terms = sender.speak(
                rnd.target, r, explore, invent=cfg.condition == "dynamic", status=status, candidates=rnd.candidates)
        rnd.sender_raw = getattr(sender, "last_raw", rnd.message)

    def _hear(self, rnd: Round, receiver: Agent, problem: str | None) -> bool:
        """One receiver's pick (none when the message broke a rule, or when it gave no reading
        of the message — a lucky pick does not count), and what it learns; whether it was right."""
        if problem:
            self.failures[f"message_{problem.replace(' ', '_')}"] += 1
            choice = None
        else:
            choice, interp = receiver.listen(rnd.message, rnd.candidates)
            if choice is not None and not any((interp or {}).values()):  # no reading of the message:
                self.failures["no_interpretation"] += 1  # a lucky pick does not count
                choice = None
        rnd.choice = choice
        # a receiver not asked this round has no reply (not the previous round's)
        rnd.receiver_raw = "" if problem else getattr(receiver, "last_raw", json.dumps({"choice": choice}))
        if hasattr(receiver, "learn") and not problem:
            receiver.learn(rnd.message, rnd.target)
        return choice == rnd.target.id

    def _keep_score(self, term: str, success: bool, r: int, receivers: list[Agent], n_agents: int) -> None:
        """A used term's score, the receivers' reading of it, and — three agents — its vote: a
        proposed term enters the shared glossary once a majority reads it as defined."""
        t = self.glossary.get(term)
        if t is None:
            return
        self.glossary.record_use(term, success, r)
        heard = [a.interpretation(term) for a in receivers if hasattr(a, "interpretation")]
        if heard:
            self.glossary.interpret(term, heard[-1])
        if t.status == "proposed" and 2 * (1 + sum(1 for h in heard if h == t.canonical)) > n_agents:
            self.glossary.set_status(term, "pending" if self.cfg.review else "active")

    def _upkeep(self, r: int) -> None:
        """Every 20 rounds the glossary is pruned; each round it keeps its count and is saved."""
        cfg = self.cfg
        if r % 20 == 19:
            self.pruned += self.glossary.prune(r, cfg.prune_below, cfg.prune_after_uses, cfg.stale_rounds)
        self.glossary.rounds_played = r + 1
        self.glossary.commit()

    def _account(self, rnd: Round, spent: int) -> None:
        """The round's costs and reach: message and description lengths, new terms, the
        instances a template term named, the model tokens it took."""
        self.lengths.append((len(rnd.message), len(rnd.target.describe(tuple(self.game.names)))))
        self.new_per_round.append(len(rnd.new_terms))
        if self.cfg.templates and rnd.success:
            for term in rnd.used_terms:
                self.instances[term].add((rnd.target.id, rnd.target.detail))
        self.tokens.append(self._model_tokens() - spent)

    def _record(self, rnd: Round, r: int, alarm: bool) -> None:
        """The round's record, as ``--log`` writes it and the watcher gets it."""
        record = {"round": r, "target_id": rnd.target.id, "candidate_ids": [c.id for c in rnd.candidates],
                  "message": rnd.message, "sender_raw": rnd.sender_raw, "receiver_raw": rnd.receiver_raw,
                  "choice": rnd.choice, "success": rnd.success, "used_terms": rnd.used_terms,
                  "new_terms": rnd.new_terms, "alarm": alarm}
        if self.log:
            self.log.write(json.dumps(record) + "\n")
        if self.watch is not None:  # a recorder keeps it; a replay checks it
            self.watch(record)

    def _model_tokens(self) -> int:
        """Tokens the model agents' server has counted so far (0 for embedded agents)."""
        clients = {id(c): c for a in self.agents + ([self.joiner] if self.joiner else [])
                   if (c := getattr(a, "client", None)) is not None}
        return sum(c.tokens for c in clients.values())

    def _watch_success(self, r: int) -> bool:
        """The success-drop alarm: the rolling success rate over ``alarm_window`` rounds falls
        ``alarm_drop`` below the best it has reached; it re-arms once the rate recovers."""
        w = self.cfg.alarm_window
        if len(self.success) < 2 * w:
            return False
        now = float(np.mean(self.success[-w:]))
        best = self._best_rolling = max(self._best_rolling, now)
        if not self._alarm_on and now <= best - self.cfg.alarm_drop:
            self._alarm_on = True
            self.alarms.append({"round": r, "best": round(best, 3), "now": round(now, 3)})
            return True
        if self._alarm_on and now >= best - self.cfg.alarm_drop / 2:
            self._alarm_on = False
        return False

    # ------------------------------------------------------------ metrics

    def topographic_similarity(self) -> float:
        """Spearman correlation of meaning distances (Hamming) and message distances (edit)."""
        pairs = [(o, m) for o in self.game.objects if (m := self.code_for(o))]
        if len(pairs) < 3:
            return 0.0
        md, sd = [], []
        for i in range(len(pairs)):
            for j in range(i + 1, len(pairs)):
                md.append(sum(a != b for a, b in zip(pairs[i][0].values, pairs[j][0].values)))
                sd.append(_edit(pairs[i][1], pairs[j][1]))
        return _spearman(np.array(md, float), np.array(sd, float))

    def interpretability(self) -> dict[str, float | int]:
        """Does a term's form tell its meaning (the source design's check: ``b-ci`` for a blue
        circle reads, ``x9f2`` does not)? ``initials_share``: the share of used terms whose form
        holds, in order, the first letter of every value it means; ``shuffled_share``: the same
        with meanings dealt to the forms at random (20 fixed shuffles) — what chance gives."""
        terms = [t for t in self.glossary.active() if t.usage > 0 and t.canonical]
        if not terms:
            return {"terms": 0, "initials_share": 0.0, "shuffled_share": 0.0}

        def reads(form: str, meaning: Meaning) -> bool:
            letters = iter(ch for ch in form.lower() if ch.isalpha())
            return all(any(ch == str(v)[:1].lower() for ch in letters) for v in meaning.values())

        forms, meanings = [t.term for t in terms], [t.canonical for t in terms]
        rng = np.random.default_rng(0)
        shuffled = [np.mean([reads(f, meanings[j]) for f, j in zip(forms, rng.permutation(len(terms)))])
                    for _ in range(20)]
        return {"terms": len(terms), "initials_share": round(float(np.mean([reads(f, m) for f, m in
                                                                               zip(forms, meanings)])), 4),
                "shuffled_share": round(float(np.mean(shuffled)), 4)}

    def code_for(self, obj: GameObject) -> str | None:
        """The message the shared glossary gives ``obj`` now (best term per attribute), if complete."""
        out = []
        for attr, value in obj.properties(self.game.names).items():
            known = self.glossary.terms_for({attr: value})
            if not known:
                return None
            out.append(max(known, key=lambda t: (t.stable_score, t.usage, t.term)).term)
        return "".join(out)

    def definition_agreement(self) -> float:
        terms = [t for t in self.glossary.active() if t.usage > 0]
        return float(np.mean([t.agreed for t in terms])) if terms else 0.0

    def summary(self) -> dict[str, Any]:
        last = slice(-100, None)
        msg, nat = (np.array(v, float) for v in zip(*self.lengths)) if self.lengths else (np.zeros(1), np.ones(1))
        return {
            "rounds": len(self.rounds), "seed": self.cfg.seed, "condition": self.cfg.condition,
            "candidates": self.cfg.candidates, "agents": len(self.agents),
            "success_rate": round(float(np.mean(self.success)), 4) if self.success else 0.0,
            "success_rate_last100": round(float(np.mean(self.success[last])), 4) if self.success else 0.0,
            "chance_rate": round(self.game.chance, 4),
            "compression_ratio": round(float(msg[last].mean() / nat[last].mean()), 4),
            "glossary_size": self.glossary.size(),
            "new_terms_last100": int(sum(self.new_per_round[last])),
            "definition_agreement": round(self.definition_agreement(), 4),
            "topographic_similarity": round(self.topographic_similarity(), 4),
            "interpretability": self.interpretability(),
            "temperature": self.cfg.temperature,
            "pruned_terms": len(self.pruned),
            "pending_review": len(self.glossary.pending()),
            "success_alarms": self.alarms,
            **self._economy(),
            "failures": dict(self.failures),
            **self._model_made(),
            **self._templates(),
        }

    def _templates(self) -> dict[str, Any]:
        """With ``templates``: how far each term generalises — the distinct objects and instances
        (object and detail) it named in rounds that succeeded, and how many values its schema
        fixes. A name for one object would name one object; a template names many."""
        if not self.cfg.templates:
            return {}
        used = [t for t in self.glossary.active() if self.instances.get(t.term)]
        if not used:
            return {"templates": {"terms": 0, "objects_per_term": 0.0, "instances_per_term": 0.0,
                                  "schema_values": 0.0, "objects": len(self.game.objects)}}
        return {"templates": {
            "terms": len(used),
            "objects_per_term": round(float(np.mean([len({o for o, _ in self.instances[t.term]}) for t in used])), 2),
            "instances_per_term": round(float(np.mean([len(self.instances[t.term]) for t in used])), 2),
            "schema_values": round(float(np.mean([len(t.canonical) for t in used])), 2),
            "objects": len(self.game.objects)}}

    def _economy(self) -> dict[str, float]:
        """What a round costs over the last 100 rounds: the message's characters against the
        spelled-out description's (the natural-language baseline) — and with model agents, the
        tokens the server counted for the whole round (prompts and replies), the real bill.
        Embedded agents have no tokenizer: their cost is characters (a tokenizer may well spend
        more tokens on an invented syllable than on a common word — see docs/referential.md)."""
        if not self.lengths:
            return {}
        msg, nat = (np.array(v, float) for v in zip(*self.lengths[-100:]))
        out = {"message_chars_per_round": round(float(msg.mean()), 2),
               "baseline_chars_per_round": round(float(nat.mean()), 2)}
        if any(self.tokens):
            out["model_tokens_per_round"] = round(float(np.mean(self.tokens[-100:])), 1)
        return out

    def _model_made(self) -> dict[str, dict[str, float]]:
        """With model agents: the turns the model actually played (vs the rounds), so a run
        where every reply failed does not pass for a model result."""
        made = [a.made for a in self.agents + ([self.joiner] if self.joiner else []) if hasattr(a, "made")]
        if not made:
            return {}
        sender = sum(m["sender"] for m in made)
        receiver = sum(m["receiver"] for m in made)
        return {"model_made": {"sender_turns": sender, "receiver_turns": receiver, "rounds": len(self.rounds),
                               "sender_share": round(sender / max(1, len(self.rounds)), 4)}}

    def run(self) -> dict[str, Any]:
        for _ in range(self.cfg.rounds - len(self.rounds)):
            self.step()
        self.glossary.snapshot(self.run_id, self.offset + len(self.rounds))
        return self.summary()

    def close(self) -> None:
        if self.log:
            self.log.close()
        self.glossary.close()
        for a in self.agents + ([self.joiner] if self.joiner and self.joiner not in self.agents else []):
            if hasattr(a, "close"):
                a.close()


def _edit(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    def ranks(v: np.ndarray) -> np.ndarray:
        order = np.argsort(v, kind="stable")
        r = np.empty(len(v))
        r[order] = np.arange(len(v))
        for val in np.unique(v):  # average ranks for ties
            m = v == val
            r[m] = r[m].mean()
        return r

    rx, ry = ranks(x), ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])
