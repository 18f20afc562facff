"""An installed MiroFish (a wheel, not the checkout) carries its assets and runs the same tank.

``pip install .`` once gave a package without ``assets/`` (the defaults, presets and prompts sit
beside the package in a checkout): ``live`` stopped at "no such prompt file". ``setup.py`` now
copies them into the package (``mirofish/assets``) and ``config.ASSETS`` looks there first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_wheel_installed_elsewhere_runs_a_preset_and_gives_the_checkouts_tank(tmp_path):
    src = tmp_path / "src"  # (a copy: the build writes its build/ and egg-info there, not in the checkout)
    shutil.copytree(ROOT / "mirofish", src / "mirofish", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copytree(ROOT / "assets", src / "assets")
    for name in ("setup.py", "pyproject.toml", "README.md", "MANIFEST.in"):
        shutil.copy(ROOT / name, src / name)
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", str(src), "--no-deps", "--no-build-isolation", "-w", str(wheels)], check=True,
                   capture_output=True)
    (wheel,) = wheels.glob("mirofish-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True, capture_output=True)
    assert (site / "mirofish" / "assets" / "prompts" / "fish.toml").is_file()

    # -S: no site-packages .pth (the checkout's editable install is not on the path); the
    # dependencies come from this Python's site-packages, given after the installed package
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), sysconfig.get_paths()["purelib"]]))
    run = [sys.executable, "-S", "-m", "mirofish", "live", "--headless", "--ticks", "60", "--preset",
           "schooling-demo"]
    where = subprocess.run([sys.executable, "-S", "-c", "import mirofish.config as c; print(c.ASSETS)"], env=env,
                           cwd=tmp_path, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()) == site / "mirofish" / "assets"
    installed = subprocess.run(run, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr[-500:]
    checkout = subprocess.run([sys.executable, "-m", "mirofish", *run[4:]], cwd=ROOT, capture_output=True, text=True,
                              check=True)
    got, want = json.loads(installed.stdout), json.loads(checkout.stdout)
    assert got["final_state_hash"] == want["final_state_hash"] and got["fish"] == want["fish"] == 100
