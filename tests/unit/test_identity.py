"""Who acts for a job's owner (runbook.identity): the decision as data in, data out; the argv
each mode runs; the client's job mutations wrapped and its reads and a drain left alone; the
lineage tag bound to its owner; the exit code of a refusal; `config show`'s identity."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from runbook import identity, lineage
from runbook.errors import ConfigError, ExitCode
from runbook.identity import Account, Actor, NotPermitted
from runbook.site import IdentitySection
from runbook.slurm.cli_backend import CliSlurm

ROOT = Account("root", 0, 0)
SVC = Account("rbsvc", 1005, 1006)
ALICE = Account("alice", 1002, 1003)
TOOLS = {c: f"/usr/bin/{c}" for c in identity.JOB_COMMANDS}


def section(**kw) -> IdentitySection:
    return IdentitySection(**kw)


@pytest.mark.parametrize(
    ("act_as", "me", "owner", "mode"),
    [
        ("auto", ROOT, ALICE, "runuser"),  # a site service as root acts as the owner
        ("auto", SVC, SVC, "self"),  # anyone on their own job
        ("auto", SVC, ALICE, "refuse"),  # not root, not its own job: until the site says how
        ("self", ROOT, ALICE, "refuse"),
        ("self", ALICE, ALICE, "self"),
        ("sudo", SVC, ALICE, "sudo"),
        ("runuser", ROOT, ALICE, "runuser"),
        ("sbatch_uid", ROOT, ALICE, "sbatch_uid"),
    ],
)
def test_the_mode_in_force_from_the_setting_and_who_runbook_is(act_as, me, owner, mode):
    assert identity.mode_for(section(act_as=act_as), me, owner) == mode


def test_a_job_runbook_may_not_act_for_is_refused_with_the_sudoers_line_and_exit_4():
    with pytest.raises(NotPermitted) as e:
        identity.resolve(section(owners_group="hpcusers"), SVC, ALICE, TOOLS)
    assert e.value.exit_code == ExitCode.NEEDS_HUMAN
    assert "alice" in e.value.message and "rbsvc" in e.value.message
    assert (
        "rbsvc ALL=(%hpcusers) NOPASSWD:SETENV: /usr/bin/sbatch, /usr/bin/scancel, "
        "/usr/bin/scontrol, /usr/bin/sacct, /usr/bin/sh" in e.value.hint
    )
    assert 'act_as = "sudo"' in e.value.hint


@pytest.mark.parametrize(
    ("act_as", "me", "owner", "said"),
    [
        ("runuser", SVC, ALICE, "needs root"),
        ("sbatch_uid", SVC, ALICE, "needs root"),
        ("sudo", SVC, ROOT, "never becomes root"),
        ("sbatch_uid", ROOT, Account("ghost"), "no uid/gid"),
        ("auto", ROOT, Account(""), "did not say who owns"),
    ],
)
def test_what_cannot_be_done_as_the_owner_is_refused_before_anything(act_as, me, owner, said):
    with pytest.raises(NotPermitted, match=said):
        identity.resolve(section(act_as=act_as), me, owner, TOOLS)


def test_unknown_settings_are_configuration_errors_naming_the_valid_ones():
    with pytest.raises(ConfigError, match="auto, self, sudo, runuser, sbatch_uid"):
        identity.check_settings(section(act_as="root"))
    with pytest.raises(ConfigError, match="check, sudo"):
        identity.check_settings(section(node_reads="ssh"))
    for bad in ("/abs", "../up", ""):
        with pytest.raises(ConfigError, match="rerun_dir"):
            identity.check_settings(section(rerun_dir=bad))


def test_each_mode_runs_the_jobs_commands_as_the_owner():
    sb = ["sbatch", "-M", "c1", "--parsable", "job.sbatch"]
    env = {"PYTORCH_ALLOC_CONF": "expandable_segments:True,max_split_size_mb:128"}
    sudo = Actor("sudo", ALICE, SVC)
    assert sudo.wrap(["scancel", "7"]) == ["sudo", "-n", "-u", "alice", "--", "scancel", "7"]
    # sudo takes the variables itself, before `--` (a grant of `env` would grant everything);
    # the value's comma survives (no --export list splits it).
    assert sudo.submit(env, sb) == [
        "sudo",
        "-n",
        "-u",
        "alice",
        "PYTORCH_ALLOC_CONF=expandable_segments:True,max_split_size_mb:128",
        "--",
        *sb,
    ]
    ru = Actor("runuser", ALICE, ROOT)
    assert ru.submit(env, sb)[:6] == [
        "runuser",
        "-u",
        "alice",
        "--",
        "env",
        f"PYTORCH_ALLOC_CONF={env['PYTORCH_ALLOC_CONF']}",
    ]
    uid = Actor("sbatch_uid", ALICE, ROOT)
    assert uid.submit({}, sb) == [
        "sbatch",
        "--uid=1002",
        "--gid=1003",
        "-M",
        "c1",
        "--parsable",
        "job.sbatch",
    ]
    assert uid.wrap(["scancel", "7"])[:4] == ["runuser", "-u", "alice", "--"]
    me = Actor("self", ALICE, ALICE)
    assert me.wrap(["scancel", "7"]) == ["scancel", "7"]
    assert me.submit(env, sb)[0] == "env" and me.submit({}, sb) == sb


def test_the_client_acting_for_the_owner_wraps_the_jobs_changes_not_its_reads_nor_a_drain():
    cli = CliSlurm(transport=None, cluster="c1")
    owner = cli.acting_as(Actor("sudo", ALICE, SVC))
    pre = ["sudo", "-n", "-u", "alice", "--"]
    assert owner.cancel_argv("7") == [*pre, "scancel", "-M", "c1", "7"]
    assert owner.hold_argv("8") == [*pre, "scontrol", "-M", "c1", "hold", "8"]
    assert owner.release_argv("8") == [*pre, "scontrol", "-M", "c1", "release", "8"]
    assert owner.depend_argv("8", "afterok:9")[:5] == pre
    assert owner.submit_argv("/h/a/job.sbatch", ["--chdir=/h/a"], {"A": "1"})[:6] == [
        *pre[:4],
        "A=1",
        "--",
    ]
    # A drain is an action on the cluster: runbook's own, never the owner's.
    assert owner.drain_argv("gpu-01", "Xid 79")[0] == "scontrol"
    # The client it came from is unchanged (another incident's jobs are not alice's).
    assert cli.cancel_argv("7") == ["scancel", "-M", "c1", "7"] and cli.actor is None


def test_a_rerun_tag_counts_only_on_a_job_of_the_owner_it_was_signed_for():
    secret = b"k"
    tag = lineage.tag(secret, "inc1", "100", "halve_micro_batch", 5, "", "alice")
    assert "owner=alice" in tag
    mine = lineage.read("101", tag, "alice", secret=secret, runbook_user="root")
    assert mine is not None and mine.trusted
    # bob copies alice's rerun's tag onto a job of his: not believed.
    copied = lineage.read("202", tag, "bob", secret=secret, runbook_user="root")
    assert copied is not None and not copied.trusted and "alice" in copied.why
    # The owner field is signed: rewriting it breaks the signature.
    forged = lineage.read(
        "203", tag.replace("owner=alice", "owner=bob"), "bob", secret=secret, runbook_user="root"
    )
    assert forged is not None and not forged.trusted and "not signed" in forged.why
    # A tag from before owners were signed counts on runbook's own account's jobs only.
    old = lineage.tag(secret, "inc0", "90", "expandable_segments")
    assert lineage.read("91", old, "root", secret=secret, runbook_user="root").trusted
    assert not lineage.read("92", old, "alice", secret=secret, runbook_user="root").trusted


def test_a_refusal_in_a_stage_is_exit_4_not_a_failed_step(tmp_path):
    from runbook.report.model import Incident
    from runbook.report.recorder import Recorder, Stopped
    from runbook.report.views import conclude

    inc = Incident(id="i", job_id="7", source="cli", actor="t", site="s")
    rec = Recorder(tmp_path / "i", inc)
    with pytest.raises(Stopped), rec.step("job", lambda _m: None):
        raise NotPermitted("job of alice: not allowed", hint="grant it")
    from runbook.site import SiteConfig

    conclude(inc, None, None, None, [], False, [], SiteConfig())
    assert inc.exit_code == ExitCode.NEEDS_HUMAN and inc.status == "stopped"
    assert any("grant it" in e for e in inc.errors)


def test_config_show_says_who_acts_and_the_line_a_site_grants(tmp_path, monkeypatch):
    from runbook.cli import cli as main

    conf = tmp_path / "site.toml"
    conf.write_text('[identity]\nact_as = "auto"\nowners_group = "hpcusers"\n')
    r = CliRunner().invoke(main, ["--config", str(conf), "config", "show", "--json"])
    assert r.exit_code == 0, r.output
    ident = json.loads(r.output)["identity"]
    assert ident["act_as"] == "auto" and "(%hpcusers) NOPASSWD:SETENV:" in ident["sudoers_line"]
    assert ident["account"] == identity.me().name
    if identity.me().uid == 0:
        assert ident["acts_for_others"] and ident["how"].startswith("root")
    else:
        assert not ident["acts_for_others"] and ident["missing"]
    text = CliRunner().invoke(main, ["--config", str(conf), "config", "show"]).output
    assert "# identity:" in text and "sudoers line" in text


def test_an_incident_folder_is_runbooks_alone(tmp_path):
    """It holds a user's logs and commands: no other account may list or read it."""
    from runbook.report.model import Incident
    from runbook.report.recorder import Recorder

    folder = tmp_path / "incidents" / "i"
    rec = Recorder(folder, Incident(id="i", job_id="7", source="cli", actor="t", site="s"))
    rec.raw("log-excerpt.txt", "a line\n")
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "incidents").stat().st_mode & 0o077 == 0
    for f in folder.rglob("*"):
        assert f.stat().st_mode & 0o077 == 0, f


def test_several_owners_scans_are_one_exec_whose_outputs_come_back_apart():
    """The sweep reads every job on a host in one round trip; where reads run as each owner,
    their scans run one after the other in that exec, each quoted whole (no word of one can
    reach the shell), and an owner whose scan never started (sudo refused) is told apart. A log's
    own line that reads as the separator does not shift one owner's output onto the next's."""
    from runbook.evidence.collect import one_exec
    from runbook.transport.local import LocalTransport

    hostile = "x; echo INJECTED $(id)\n@@owner-group-end\n"
    argv, group = one_exec(
        [
            ["sh", "-c", 'printf "@@now 1\\nlast line, no newline"'],
            ["printf", "@@now 2\\n%s\\n", hostile],
            ["sh", "-c", "echo 'sudo: a password is required' >&2; exit 1"],
        ]
    )
    r = LocalTransport().run(argv)
    outs = r.stdout.split(group)
    assert outs == ["@@now 1\nlast line, no newline", f"@@now 2\n{hostile}\n", ""]
    assert "INJECTED" not in r.stdout.replace(hostile, "")
    assert "password is required" in r.stderr


def test_with_no_working_directory_the_rerun_is_a_persons_not_a_folder_guessed():
    """Acting as the owner, the rerun's files go under the job's working directory; a job
    Slurm names none for gets no guessed folder: the plan says a person resubmits it."""
    from types import SimpleNamespace

    from runbook.actions.remediate import _writer
    from runbook.planning.ladder import Plan
    from runbook.site import SiteConfig

    actor = Actor("runuser", ALICE, ROOT)
    plan = Plan(verdict="true_oom")
    job = SimpleNamespace(job_id="7", work_dir="")
    assert _writer(SiteConfig(), job, plan, None, actor, "inc1") is None
    assert plan.needs_human and "no working directory for job 7" in plan.human_action
    job.work_dir = "/home/alice/run"
    folder, _ = _writer(SiteConfig(), job, Plan(verdict="true_oom"), None, actor, "inc1")
    assert str(folder) == "/home/alice/run/.runbook/inc1"


def test_through_sudo_an_account_outside_the_grant_is_refused_before_anything_as_the_owner():
    """sudo is asked (`sudo -n -l`, which runs nothing) before the first command as the owner:
    outside the grant, exit 4 with the grant, never sudo's own "a password is required"."""
    from runbook.slurm.client import JobInfo

    job = JobInfo(job_id="5", user="alice")
    asked = []

    def nothing_listed(tools, target):
        asked.append(target)
        return {c: c in ("sacct",) for c in identity.JOB_COMMANDS}

    with pytest.raises(NotPermitted) as e:
        identity.for_job(section(act_as="sudo", owners_group="hpcusers"), job, nothing_listed)
    assert asked == ["alice"] and e.value.exit_code == ExitCode.NEEDS_HUMAN
    said = f"{e.value.message} {e.value.hint}"
    assert "sudo does not let" in said and "as alice without a password" in said
    assert "/sbatch" in said and "/scancel" in said and "/sacct," not in e.value.message
    assert "NOPASSWD:SETENV:" in said and "(%hpcusers)" in said and "nothing was read" in said

    def all_listed(tools, target):
        return {c: True for c in identity.JOB_COMMANDS}

    actor = identity.for_job(section(act_as="sudo"), job, all_listed)
    assert actor.mode == "sudo" and actor.owner.name == "alice"

    def never(tools, target):
        raise AssertionError("sudo asked for a job runbook does not act on through sudo")

    mine = JobInfo(job_id="6", user=identity.me().name)
    assert identity.for_job(section(act_as="auto"), mine, never).mode == "self"
