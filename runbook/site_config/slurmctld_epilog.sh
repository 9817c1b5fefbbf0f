#!/bin/sh
# runbook's trigger from Slurm itself. Set it as EpilogSlurmctld in slurm.conf, on the host that
# runs slurmctld (and has runbook installed with the site's settings):
#
#     EpilogSlurmctld=/etc/slurm/runbook-epilog.sh
#
# slurmctld runs it as SlurmUser whenever a job ends, with the job in its environment (Slurm's
# Prolog and Epilog Guide: SLURM_JOB_ID, SLURM_JOB_EXIT_CODE2 "exit:signal", SLURM_JOB_DERIVED_EC
# the highest exit code of the job's steps, SLURM_JOB_PARTITION), and with no search path set.
# A job that ended with a nonzero exit code or a signal, or one of whose steps did, is handed to
# `runbook hook` on standard input, detached: slurmctld does not wait for the incident, and a
# failure here is only logged by Slurm. Jobs that ended well cost one shell start.
#
# Edit these lines for the site (a copy of this file: `runbook --version` says where it ships).
RUNBOOK=/usr/local/bin/runbook        # absolute: epilogs run without a search path
SITE_FLAGS="--site prod"              # how runbook finds the site settings
PARTITIONS=""                         # only jobs of these partitions, space separated; "" = all
LOG=/var/log/runbook-trigger.log      # runbook's output for each job handed over

PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin  # for runbook's scontrol, ssh
export PATH
case "$SLURM_JOB_ID" in '' | *[!0-9_]*) exit 0 ;; esac # a job id, or nothing to do
case "${SLURM_JOB_EXIT_CODE2:-0:0}:${SLURM_JOB_DERIVED_EC:-0}" in
  0:0:0 | 0:0:0:0) exit 0 ;; # ended well, every step too
esac
if [ -n "$PARTITIONS" ]; then
  case " $PARTITIONS " in *" $SLURM_JOB_PARTITION "*) ;; *) exit 0 ;; esac
fi
# A task of a job array is named ARRAY_TASK: its own id may be the array's, which Slurm reads as
# every task of it (slurmctld sets SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID here, measured
# on 22.05: the task that ends last carries the array's own id).
JOB=$SLURM_JOB_ID
case "${SLURM_ARRAY_JOB_ID:-x}${SLURM_ARRAY_TASK_ID:-x}" in
  *[!0-9]*) ;;
  *) JOB=${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} ;;
esac
printf '{"job_id": "%s"}\n' "$JOB" |
  setsid $RUNBOOK $SITE_FLAGS hook >>"$LOG" 2>&1 &
exit 0
