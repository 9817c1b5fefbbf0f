"""Installed as users install it: sdist and wheel built, the wheel installed into a fresh venv in
a folder outside the checkout, on the oldest supported Python (3.10 when pyenv or the system has
it), then run from a folder that is not the checkout. Editable installs hide missing package data;
this does not.

Needs the package registry (PyPI) for build and the runtime dependencies, as CI has.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.install

OLDEST = (3, 10)


def oldest_python() -> str:
    """The oldest supported interpreter on this machine: python3.10 (PATH or pyenv)."""
    want = f"python{OLDEST[0]}.{OLDEST[1]}"
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [
        str(p / "bin" / "python3")
        for p in sorted(pyenv_root.glob(f"{OLDEST[0]}.{OLDEST[1]}.*"), reverse=True)
    ]
    candidates += [c for c in (shutil.which(want),) if c]  # a pyenv shim may not run: try it
    for cand in candidates:
        ok = subprocess.run(
            [cand, "-c", "import sys, venv; print(sys.version_info[:2])"],
            capture_output=True,
            text=True,
        )
        if ok.returncode == 0 and ok.stdout.strip() == str(OLDEST):
            return cand
    if os.environ.get("CI"):
        pytest.fail(f"{want} is not on this machine; CI must test the oldest supported Python")
    return sys.executable


def run(argv, cwd, env=None, check=True, timeout=600, stdin=None):
    r = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, input=stdin
    )
    if check and r.returncode != 0:
        raise AssertionError(
            f"{argv} exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
        )
    return r


@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    """(runbook executable, venv python, a work folder outside the checkout, dist folder)."""
    root = tmp_path_factory.mktemp("wheel-install")
    dist = root / "dist"
    # build: isolated, so a missing build requirement or package-data rule shows here. The wheel
    # is built from the sdist, so the sdist must carry everything too.
    run([sys.executable, "-m", "build", "--outdir", str(dist), str(REPO)], cwd=root)
    wheel = next(dist.glob("runbook-*.whl"))
    venv = root / "venv"
    run([oldest_python(), "-m", "venv", str(venv)], cwd=root)
    py = venv / "bin" / "python"
    run(
        [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)], cwd=root
    )
    work = root / "work"
    work.mkdir()
    return venv / "bin" / "runbook", py, work, dist


def clean_env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNBOOK_")}
    env.update(HOME=str(work), XDG_CONFIG_HOME=str(work / ".config"), PYTHONPATH="")
    return env


def test_wheel_and_sdist_carry_the_package_data(installed):
    _, _, _, dist = installed
    names = zipfile.ZipFile(next(dist.glob("*.whl"))).namelist()
    for needed in (
        "runbook/playbooks/oom.yaml",
        "runbook/playbooks/xid_catalog.yaml",
        "runbook/templates/report.md.j2",
        "runbook/templates/report.html.j2",
        "runbook/site_config/example.toml",
    ):
        assert needed in names, f"{needed} missing from the wheel"
    with tarfile.open(next(dist.glob("*.tar.gz"))) as tar:
        sdist = tar.getnames()
    assert any(n.endswith("runbook/playbooks/oom.yaml") for n in sdist)


def test_version_names_the_packaged_playbooks_on_the_oldest_python(installed):
    exe, py, work, _ = installed
    r = run([str(exe), "--version"], cwd=work, env=clean_env(work))
    assert "runbook " in r.stdout
    assert f"python {OLDEST[0]}.{OLDEST[1]}" in r.stdout or oldest_python() == sys.executable
    playbooks = next(ln for ln in r.stdout.splitlines() if ln.startswith("playbooks:"))
    assert "site-packages" in playbooks and str(REPO) not in playbooks
    # The Slurm trigger ships in the wheel too, where --version says, and runs as a shell reads it.
    epilog = Path(
        next(ln for ln in r.stdout.splitlines() if "slurmctld epilog" in ln).split(": ")[-1]
    )
    assert "site-packages" in str(epilog) and epilog.is_file()
    assert subprocess.run(["sh", "-n", str(epilog)]).returncode == 0


def test_diagnose_on_the_bundled_example_from_outside_the_checkout(installed):
    exe, _, work, _ = installed
    log = REPO / "examples" / "logs" / "torchrun-oom-rank3.log"
    r = run([str(exe), "diagnose", "--log", str(log), "--json"], cwd=work, env=clean_env(work))
    doc = json.loads(r.stdout)
    assert doc["verdict"] not in ("unknown", "not_oom") and doc["first_failure"]["ranks"] == [3]
    piped = run(
        [str(exe), "diagnose", "--log", "-", "--json"],
        cwd=work,
        env=clean_env(work),
        stdin=log.read_text(),
    )
    assert json.loads(piped.stdout)["verdict"] == doc["verdict"]


def test_config_init_then_show_from_the_user_config_folder(installed):
    exe, _, work, _ = installed
    env = clean_env(work)
    r = run([str(exe), "config", "init", "lab"], cwd=work, env=env)
    made = work / ".config" / "runbook" / "sites" / "lab.toml"
    assert made.is_file() and str(made) in r.stdout
    shown = json.loads(
        run([str(exe), "--site", "lab", "config", "show", "--json"], cwd=work, env=env).stdout
    )
    assert shown["settings"] == str(made)
    assert shown["values"]["site.name"] == {"value": "lab", "origin": f"file {made}"}
    assert shown["values"]["ssh.port"]["origin"] == f"file {made}"  # the starter names every key
    assert shown["backend"] == {"name": "cli"}
    # The pyslurm backend chosen where no pyslurm is installed (as on a fresh machine): config
    # show says so, and which release would serve, instead of failing.
    pys = work / "pys.toml"
    pys.write_text(made.read_text().replace('backend = "cli"', 'backend = "pyslurm"'))
    r = run([str(exe), "--config", str(pys), "config", "show", "--json"], cwd=work, env=env)
    backend = json.loads(r.stdout)["backend"]
    assert backend["name"] == "pyslurm" and backend["pyslurm"]["version"] is None
    assert "pyslurm does not import" in backend["pyslurm"]["error"]
    text = run([str(exe), "--config", str(pys), "config", "show"], cwd=work, env=env).stdout
    assert "# pyslurm: the site config chooses the pyslurm backend" in text
    bad = work / "bad.toml"
    bad.write_text("[ssh\n")
    r = run([str(exe), "--config", str(bad), "config", "show"], cwd=work, env=env, check=False)
    assert r.returncode == 2 and str(bad) in r.stderr and "Traceback" not in r.stderr
    r = run(
        [str(exe), "--config", str(work / "nope.toml"), "config", "show"],
        cwd=work,
        env=env,
        check=False,
    )
    assert r.returncode == 2 and "nope.toml does not exist" in r.stderr


def test_help_and_diagnose_import_no_heavy_library(installed):
    _, py, work, _ = installed
    log = REPO / "examples" / "logs" / "torchrun-oom-rank3.log"
    probe = (
        "import sys\n"
        "from runbook.cli import cli\n"
        "for argv in (['--help'], ['diagnose', '--log', sys.argv[1]]):\n"
        "    try:\n"
        "        cli.main(argv, prog_name='runbook', standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('paramiko', 'jinja2', 'waitress', 'torch', 'invoke', 'cryptography')\n"
        "print('HEAVY', [m for m in heavy if m in sys.modules])\n"
    )
    r = run([str(py), "-c", probe, str(log)], cwd=work, env=clean_env(work))
    assert r.stdout.strip().splitlines()[-1] == "HEAVY []"
