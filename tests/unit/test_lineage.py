"""Lineage tags in job comments: believed only when signed with the site's key and on a job of
runbook's own user; anything else that claims a lineage is named, not followed."""

from __future__ import annotations

from types import SimpleNamespace

from runbook import lineage

KEY = b"site-key"


def test_signed_tag_round_trip_and_tampering():
    t = lineage.tag(KEY, "inc-1", "100", "halve_micro_batch")
    ok = lineage.read("101", f"user text {t} more", "svc", secret=KEY, runbook_user="svc")
    assert ok.trusted and ok.fields["parent"] == "100" and ok.fields["rung"] == "halve_micro_batch"
    tampered = t.replace("parent=100", "parent=999")
    assert not lineage.read("101", tampered, "svc", secret=KEY, runbook_user="svc").trusted
    other_key = lineage.read("101", t, "svc", secret=b"other", runbook_user="svc")
    assert not other_key.trusted and "not signed" in other_key.why
    other_user = lineage.read("101", t, "mallory", secret=KEY, runbook_user="svc")
    assert not other_user.trusted and "mallory" in other_user.why
    assert lineage.read("101", "just a comment", "svc", secret=KEY, runbook_user="svc") is None


def test_the_walk_follows_signed_ancestors_and_names_the_forged_one():
    jobs = {
        "3": SimpleNamespace(
            job_id="3", user="svc", comment=lineage.tag(KEY, "i2", "2", "activation_checkpointing")
        ),
        "2": SimpleNamespace(
            job_id="2", user="svc", comment="runbook:incident=i1,parent=1,rung=halve_micro_batch"
        ),
    }
    client = SimpleNamespace(job=lambda j: jobs[j])
    tried, suspicious = lineage.walk(client, jobs["3"], secret=KEY, runbook_user="svc")
    assert tried == [("3", "activation_checkpointing")]
    assert len(suspicious) == 1 and "job 2" in suspicious[0] and "ignored" in suspicious[0]


def test_site_secret_is_made_once_and_kept(tmp_path):
    site = SimpleNamespace(
        state=SimpleNamespace(lineage_secret="", dir=str(tmp_path)), path=lambda v: tmp_path
    )
    first = lineage.site_secret(site)
    assert len(first) == 32 and lineage.site_secret(site) == first
    assert (tmp_path / "lineage.key").stat().st_mode & 0o777 == 0o600
    site.state.lineage_secret = "shared-by-two-hosts"
    assert lineage.site_secret(site) == b"shared-by-two-hosts"


def test_the_parents_need_is_signed_with_the_tag_and_read_back():
    need = lineage.need_text(8, 34567.4)
    assert need == "8:34567"
    t = lineage.tag(KEY, "inc-1", "100", "halve_micro_batch", step=12, need=need)
    ok = lineage.read("101", t, "svc", secret=KEY, runbook_user="svc")
    assert ok.trusted and lineage.parse_need(ok.fields["need"]) == (8, 34567.0)
    forged = t.replace("need=8:34567", "need=8:9")
    assert not lineage.read("101", forged, "svc", secret=KEY, runbook_user="svc").trusted
    # Tags made before the need was kept still verify, with or without their step.
    for old in (
        lineage.tag(KEY, "inc-1", "100", "halve_micro_batch"),
        lineage.tag(KEY, "inc-1", "100", "halve_micro_batch", step=12),
    ):
        assert (
            "need=" not in old
            and lineage.read("101", old, "svc", secret=KEY, runbook_user="svc").trusted
        )
    assert lineage.need_text(None, 1.0) == "" and lineage.need_text(8, None) == ""
    for bad in ("", "8", "x:1", "0:5", "8:-1", "1234567:5", "8:1e9"):
        assert lineage.parse_need(bad) is None, bad
