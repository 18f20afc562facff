"""Token figures by a model's own tokenizer (MIROFISH_TOKENIZER, brains/prompt.py): where it names a
tokenizer.json the scenes' token figures and the bundled test server count with it and say so; a
file that is not one is one line and exit 2."""

from __future__ import annotations

import json

from mirofish.brains.prompt import estimate_tokens
from mirofish.cli import main


def char_tokenizer(path) -> None:
    """A tokenizer that makes one token of every character: far more tokens than the estimate."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {chr(c): c - 31 for c in range(32, 127)} | {"[UNK]": 0}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tok.save(str(path))


def handoff(capsys) -> dict:
    assert main(["handoff", "--headless", "--tasks", "4", "--seed", "3"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])["L1+2+3"]


def test_a_tokenizer_file_counts_the_token_figures_and_is_named(tmp_path, monkeypatch, capsys):
    est = handoff(capsys)
    assert est["tokens"].startswith("estimated")
    tok = tmp_path / "tokenizer.json"
    char_tokenizer(tok)
    monkeypatch.setenv("MIROFISH_TOKENIZER", str(tok))
    text = "You are a fish."
    assert estimate_tokens(text) == len(text)  # one token a character, as this tokenizer cuts it
    got = handoff(capsys)
    assert got["tokens"].startswith("counted by tokenizer tokenizer.json")
    assert got["completion_rate"] == est["completion_rate"]  # the same run, counted otherwise
    assert got["extra_token_share"] != est["extra_token_share"]


def test_a_tokenizer_that_is_not_one_is_one_line(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    for path in (bad, tmp_path / "missing.json"):
        monkeypatch.setenv("MIROFISH_TOKENIZER", str(path))
        assert main(["handoff", "--headless", "--tasks", "1"]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "MIROFISH_TOKENIZER" in err and "Traceback" not in err
