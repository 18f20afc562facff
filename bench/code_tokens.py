"""Tokens, not characters: what the referential game's invented code costs a real tokenizer.

The game's compression is measured in characters (embedded agents have no tokenizer). A model
is billed in tokens, and a BPE tokenizer may spend more tokens on an invented syllable
("kamoti") than on common words ("large red square"). This script plays the same seeded
rounds in the dynamic condition and in the spelled-out baseline and counts each message's
tokens with a GGUF model's own tokenizer (llama-cpp-python, optional — see docs/model-brain.md's
llama.cpp recipe)::

    python bench/code_tokens.py --gguf PATH/TO/model.gguf [--rounds 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mirofish.scenes.referential.experiment import Experiment
from mirofish.scenes.referential.game import GameConfig


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf", required=True, help="a GGUF model file whose tokenizer counts the tokens")
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    try:
        import llama_cpp
    except ImportError:
        print("code_tokens: needs llama-cpp-python (see docs/model-brain.md's llama.cpp recipe)", file=sys.stderr)
        return 2
    if not Path(args.gguf).is_file():
        print(f"code_tokens: no such file: {args.gguf}", file=sys.stderr)
        return 2
    vocab = llama_cpp.Llama(args.gguf, vocab_only=True, verbose=False)
    out = {"model": Path(args.gguf).name, "rounds": args.rounds, "seed": args.seed}
    for condition in ("dynamic", "natural"):
        exp = Experiment(GameConfig(seed=args.seed, rounds=args.rounds, condition=condition))
        exp.run()
        last = exp.rounds[-100:]
        tokens = [len(vocab.tokenize(r.message.encode(), add_bos=False)) for r in last]
        out[condition] = {"chars_per_message": round(sum(len(r.message) for r in last) / len(last), 2),
                          "tokens_per_message": round(sum(tokens) / len(tokens), 2)}
        exp.close()
    out["char_compression"] = round(out["dynamic"]["chars_per_message"] / out["natural"]["chars_per_message"], 3)
    out["token_compression"] = round(out["dynamic"]["tokens_per_message"] / out["natural"]["tokens_per_message"], 3)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
