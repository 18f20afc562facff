import tomllib

import pytest

from mirofish.config import DEFAULT_CONFIG_PATH, Config, ConfigError, hundredths, load_config


def test_default_file_matches_model_defaults():
    # assets/default.toml is the documented source; the model's defaults must say the same.
    with open(DEFAULT_CONFIG_PATH, "rb") as fh:
        data = tomllib.load(fh)
    assert Config.model_validate(data) == Config()


def test_design_parameters_are_present():
    c = load_config()
    assert (c.world.width, c.world.height, c.world.wall_margin) == (96, 54, 2)
    assert c.world.tick_seconds == 0.5
    assert hundredths(c.fish.decay_per_tick) == 15 and hundredths(c.fish.move_cost) == 30
    assert c.food.energy == 40 and c.food.rot_ticks == 300
    assert c.memory.short_size == 8 and c.memory.summary_every == 20 and c.memory.summaries_kept == 3
    assert c.triggers.hard_timeout == 12 and c.triggers.low_energy_fraction == 0.25
    assert c.brain.batch_window_ms == 80 and c.metrics.heartbeat_ticks == 20


def test_set_overrides_parse_toml_values(tmp_path):
    c = load_config(overrides=["food.spawn_rate=0.001", "world.width=40", "triggers.food_rose=false",
                               'brain.kind="instinct"'])
    assert c.food.spawn_rate == 0.001 and c.world.width == 40 and c.triggers.food_rose is False


def test_config_file_layers_over_defaults(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text("[fish]\ncount = 12\n[world]\nwidth = 30\n")
    c = load_config(path, ["world.width=31"])
    assert c.fish.count == 12 and c.world.width == 31 and c.world.height == 54


@pytest.mark.parametrize("override, key", [
    ("food.spawn_rate=abc", "food.spawn_rate"),
    ("fish.count=-3", "fish.count"),
    ("world.width=3", "world.width"),
    ("fish.decay_per_tick=0.155", "fish.decay_per_tick"),
    ("food.nonsense=1", "food.nonsense"),
    ("engine.mode=turbo", "engine.mode"),
])
def test_invalid_values_name_the_key_in_one_line(override, key):
    with pytest.raises(ConfigError) as info:
        load_config(overrides=[override])
    msg = str(info.value)
    assert key in msg and "\n" not in msg


def test_bad_files_are_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[fish\ncount = 1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
    with pytest.raises(ConfigError, match=r"section\.key=value"):
        load_config(overrides=["nokey"])


def test_a_config_written_before_cell_px_was_retired_still_loads():
    """Recordings store their config; one holding the retired world.cell_px must still open."""
    assert load_config(overrides=["world.cell_px=20"]).world.width == 96


@pytest.mark.parametrize("key", ["brain.temperature", "fish.count", "food.spawn_rate", "brain.top_p",
                                 "world.tick_seconds"])
@pytest.mark.parametrize("value", [True, False])
def test_true_or_false_for_a_number_is_refused_not_read_as_1_or_0(key, value):
    with pytest.raises(ConfigError, match=f"{key}: a number is needed, not {str(value).lower()}"):
        load_config(overrides=[f"{key}={str(value).lower()}"])


def test_a_groups_bad_url_or_bool_temperature_is_one_line(tmp_path, capsys):
    from mirofish.cli import main

    for body, says in [('model = "m"\nbase_url = "ftp://x"', "not an http(s) URL"),
                       ('model = "m"\nbase_url = "http://h:99999/v1"', "bad port"),
                       ("temperature = true", "a number is needed")]:
        cfg = tmp_path / "g.toml"
        cfg.write_text(f'[fish]\ncount = 10\n[[fish.groups]]\nname = "a"\ncount = 5\n{body}\n')
        assert main(["live", "--headless", "--ticks", "2", "--config", str(cfg)]) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1 and "pydantic" not in err
