#!/usr/bin/env bash
# The project's real test cluster: Debian's munge + slurm-wlm (slurmctld, slurmdbd on MariaDB) and
# N compute nodes gpu-01.. each in its own network + UTS + mount namespace with a real slurmd and a
# real key-only sshd. Only nvidia-smi and the kernel log are stand-ins (they replay recorded real
# outputs named by a per-node scenario file, see standin.py); nothing else is faked.
#
#   cluster.sh install        apt packages (idempotent; CI runs it)
#   cluster.sh up             bring everything up, or leave a healthy cluster as it is
#   cluster.sh down [--purge] stop every daemon and remove namespaces (--purge: also job ids, DB, keys)
#   cluster.sh status         exit 0 when every part answers, else 1 with what is missing
#   cluster.sh env            print the shell variables tests and the site config use
#
# Also a PostgreSQL (Debian's postgresql) on $CTLD_ADDR:5433, database and role `runbook`, for
# the state several agent hosts share ([state] url); trust authentication, test use only.
#
# Traffic stays on loopback and on 198.18.0.0/24 (the benchmarking range), which exists only inside
# the namespaces and on the bridge this script creates.
set -euo pipefail

STATE=${RUNBOOK_CLUSTER_STATE:-/var/tmp/runbook-devcluster}
NODES=${RUNBOOK_CLUSTER_NODES:-3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BRIDGE=rbbr0
NET=198.18.0
CTLD_ADDR=$NET.1
CLUSTER=devcluster
SSH_USER=oncall
# Job owners: ordinary accounts with private home folders (mode 700), members of OWNERS_GROUP;
# neither runbook's account nor the SSH account. SVC_USER: an unprivileged service account that
# runs runbook with the sudoers grant a site writes (docs/install.md, Running for every user).
JOB_USERS=(alice bob)
OWNERS_GROUP=hpcusers
SVC_USER=rbsvc
SECURE=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin  # sudo's secure_path
GPUS_PER_NODE=4
CTLD_HOST=$(hostname -s)
PG_PORT=5433
PG_URL="postgresql://runbook@$CTLD_ADDR:$PG_PORT/runbook"
# Raised whenever slurm.conf changes in a way tests rely on: a running cluster whose config
# lacks it is restarted by 'up' instead of reused.
CONFIG_VERSION="runbook test cluster config 2: job_env, cred_expire=15"

log() { printf '[cluster] %s\n' "$*" >&2; }
die() { printf '[cluster] error: %s\n' "$*" >&2; exit 1; }
node_name() { printf 'gpu-%02d' "$1"; }
node_addr() { printf '%s.%d' "$NET" $((10 + $1)); }

# Poll instead of sleeping a fixed time: each daemon is ready at its own pace.
wait_for() { # description timeout_s command...
  local what=$1 limit=$2; shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "$what not ready after ${limit}s (logs: $STATE/log)"
    sleep 0.2
  done
}

pid_alive() { # pidfile: alive and not a zombie
  local f=$1 pid st
  [[ -s $f ]] || return 1
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  st=$(awk '/^State:/{print $2}' "/proc/$pid/status" 2>/dev/null) || return 1
  [[ -n $st && $st != Z ]]
}

stop_pidfile() { # pidfile: TERM, wait, KILL; always removes the file
  local f=$1 pid i
  if pid_alive "$f"; then
    pid=$(<"$f")
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 50); do pid_alive "$f" || break; sleep 0.1; done
    pid_alive "$f" && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

cmd_install() {
  local pkgs=(slurm-wlm slurmdbd munge mariadb-server openssh-server openssh-client iproute2
    util-linux procps sudo postgresql python3-venv)
  if dpkg-query -W -f='${Status}\n' "${pkgs[@]}" 2>/dev/null | grep -vq 'install ok installed' ||
    [[ $(dpkg-query -W -f='${Status}\n' "${pkgs[@]}" 2>/dev/null | wc -l) -ne ${#pkgs[@]} ]]; then
    log "installing ${pkgs[*]}"
    # No systemd here: keep postinst scripts from trying to start the daemons.
    local prc=/usr/sbin/policy-rc.d created=0
    [[ -e $prc ]] || { printf '#!/bin/sh\nexit 101\n' >"$prc"; chmod +x "$prc"; created=1; }
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null
    ((created)) && rm -f "$prc"
  fi
  [[ -s /etc/munge/munge.key ]] || { mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
    create-munge-key -f; }
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
}

write_configs() {
  mkdir -p "$STATE"/{run,log,slurm/ctld,slurm/spool,ssh,scenario,nodes,jobs,calls} /etc/slurm
  chmod 755 "$STATE" "$STATE"/{scenario,nodes}
  # Written by job owners and by the stand-ins running as the SSH user.
  chmod 1777 "$STATE/jobs" "$STATE/calls"
  local nodelines="" i n
  for ((i = 1; i <= NODES; i++)); do
    n=$(node_name "$i")
    nodelines+="NodeName=$n NodeAddr=$(node_addr "$i") CPUs=4 RealMemory=8000"
    nodelines+=" Gres=gpu:h100:$GPUS_PER_NODE State=UNKNOWN"$'\n'
  done
  cat >/etc/slurm/slurm.conf <<EOF
# Written by runbook's tests/cluster/cluster.sh; rewritten on every 'up'.
# $CONFIG_VERSION
ClusterName=$CLUSTER
SlurmctldHost=$CTLD_HOST($CTLD_ADDR)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# A requeued job waits until its old credential expires (slurm.conf(5): cred_expire "also
# controls how long a requeued job must wait before starting again", 120 s by default); the
# requeue test would wait that long. The test jobs start in well under a second.
AuthInfo=cred_expire=15
StateSaveLocation=$STATE/slurm/ctld
SlurmdSpoolDir=$STATE/slurm/spool/%n
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd-%n.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd-%n.log
# No cgroup plugins: the sandbox's cgroup tree is not ours to delegate.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
MpiDefault=none
ReturnToService=2
# Fake CPU/memory counts, else the nodes go INVALID.
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# submit -> RUNNING in ~0.5 s instead of ~1.5 s.
SchedulerParameters=sched_min_interval=100000,batch_sched_delay=0
DefMemPerCPU=100
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
# The bridge address, not loopback: sacct must work from inside a node's namespace too (the
# shared-state test runs runbook hosts there).
AccountingStorageHost=$CTLD_ADDR
AccountingStorageTRES=gres/gpu
# sacct -B returns a finished job's script; the comment carries runbook's lineage.
AccountingStoreFlags=job_script,job_comment,job_env
KillWait=5
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
Waittime=0
$nodelines
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=debug Nodes=ALL Default=NO MaxTime=INFINITE State=UP
# Jobs here are handed to runbook by slurmctld itself when they fail (runbook's shipped
# EpilogSlurmctld, limited to this partition so other tests' jobs are left to them).
PartitionName=trigger Nodes=ALL Default=NO MaxTime=INFINITE State=UP
# The shared-state test's jobs (two hook hosts and a sweep on one PostgreSQL): a sweep of this
# partition sees no other test's failed jobs.
PartitionName=shared Nodes=ALL Default=NO MaxTime=INFINITE State=UP
EpilogSlurmctld=$STATE/runbook-epilog.sh
EOF
  write_trigger
  printf 'Name=gpu Type=h100 File=/dev/fakegpu/nvidia[0-%d]\n' $((GPUS_PER_NODE - 1)) \
    >/etc/slurm/gres.conf
  cat >/etc/slurm/slurmdbd.conf <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=$CTLD_ADDR
DbdPort=6819
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
PidFile=$STATE/run/slurmdbd.pid
LogFile=$STATE/log/slurmdbd.log
EOF
  chmod 600 /etc/slurm/slurmdbd.conf
  # Fake GPUs must be character devices: count-only GRES lines drop them, regular files error.
  mkdir -p /dev/fakegpu
  for ((i = 0; i < GPUS_PER_NODE; i++)); do
    [[ -c /dev/fakegpu/nvidia$i ]] || mknod -m 666 "/dev/fakegpu/nvidia$i" c 195 "$i"
  done
}

write_trigger() {
  # The site's copy of runbook's EpilogSlurmctld, edited as a site edits it: this host's runbook
  # (absolute: epilogs run without a search path), a site file whose state is its own, and the
  # trigger partition only.
  local rb site=$STATE/trigger-site.toml
  rb=$(python3 -c 'import os, sys; print(os.path.join(os.path.dirname(sys.executable), "runbook"))')
  { sed -e "s|/var/tmp/runbook-devcluster/runbook-state|$STATE/trigger-state|" \
      "$HERE/../../site_config/devcluster.toml"
    # Diagnose and report, never act: reruns started in the background by slurmctld would meet
    # the other tests' jobs.
    printf '\n[policy]\nunattended_verdicts = []\n'
  } >"$site"
  sed -e "s|^RUNBOOK=.*|RUNBOOK=$rb|" \
    -e "s|^SITE_FLAGS=.*|SITE_FLAGS=\"--config $site\"|" \
    -e 's|^PARTITIONS=.*|PARTITIONS="trigger"|' \
    -e "s|^LOG=.*|LOG=$STATE/log/runbook-trigger.log|" \
    "$HERE/../../runbook/site_config/slurmctld_epilog.sh" >"$STATE/runbook-epilog.sh"
  chmod 755 "$STATE/runbook-epilog.sh"
}

write_ssh() {
  id -u "$SSH_USER" >/dev/null 2>&1 || useradd -m -s /bin/bash "$SSH_USER"
  local d=$STATE/ssh i n
  [[ -s $d/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -C runbook-tests -f "$d/id_ed25519"
  install -m 644 "$d/id_ed25519.pub" "$d/authorized_keys"
  : >"$d/known_hosts.new"
  for ((i = 1; i <= NODES; i++)); do
    n=$(node_name "$i")
    mkdir -p "$STATE/nodes/$n"/{bin,log}
    # Host keys survive down/up so known_hosts stays true; --purge makes new ones.
    [[ -s $STATE/nodes/$n/ssh_host_ed25519_key ]] ||
      ssh-keygen -q -t ed25519 -N '' -C "$n" -f "$STATE/nodes/$n/ssh_host_ed25519_key"
    printf '%s,%s %s\n' "$n" "$(node_addr "$i")" \
      "$(cut -d' ' -f1-2 "$STATE/nodes/$n/ssh_host_ed25519_key.pub")" >>"$d/known_hosts.new"
    cat >"$STATE/nodes/$n/sshd_config" <<EOF
# One ListenAddress per node: command-line -o Port/ListenAddress would add to it, not replace it.
ListenAddress $(node_addr "$i"):22
HostKey $STATE/nodes/$n/ssh_host_ed25519_key
PidFile $STATE/run/sshd-$n.pid
AuthorizedKeysFile $d/authorized_keys
AuthenticationMethods publickey
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
# Lets key logins through for accounts that useradd left locked.
UsePAM yes
StrictModes no
X11Forwarding no
Subsystem sftp internal-sftp
EOF
  done
  mv "$d/known_hosts.new" "$d/known_hosts"
  chmod 755 "$d"
  chmod 644 "$d/known_hosts" "$d/authorized_keys"
  chmod 600 "$d/id_ed25519"
}

write_node_bin() { # node: per-node /usr/local/bin with the stand-ins, the host's entries kept
  local n=$1 bin=$STATE/nodes/$1/bin f py
  # Emptied in place, never replaced: a running node has this very directory bind-mounted.
  mkdir -p "$bin" && find "$bin" -mindepth 1 -delete
  for f in /usr/local/bin/*; do [[ -e $f ]] && ln -s "$f" "$bin/$(basename "$f")"; done
  install -m 755 "$HERE/standin.py" "$STATE/standin.py"
  # Debian's interpreter: sshd sessions do not see a user-installed python on PATH.
  py=/usr/bin/python3
  [[ -x $py ]] || py=$(command -v python3)
  for f in nvidia-smi dmesg journalctl; do
    rm -f "$bin/$f"
    # -S -E: no site packages, no PYTHON* variables: half the start-up time, same output.
    printf '#!/bin/sh\nexec %s -S -E %s %s %s "$@"\n' "$py" "$STATE/standin.py" "$STATE" "$f" >"$bin/$f"
    chmod 755 "$bin/$f"
  done
}

write_pyspy() {
  # runbook hang reads the ranks' stacks with py-spy, as the on-call account: a site grants it
  # exactly two commands as root through sudo (README, "What a site grants for runbook hang"):
  # py-spy dump of a PID and scontrol listpids. The job runs as root here, the account does not.
  local tools=$STATE/tools/py-spy
  if [[ ! -x $tools/bin/py-spy ]]; then
    python3 -m pip install -q --disable-pip-version-check --target "$tools" 'py-spy==0.4.3' 2>&1 |
      grep -v '^WARNING' || true
  fi
  [[ -x $tools/bin/py-spy ]] || die "py-spy could not be installed into $tools"
  chmod -R a+rX "$STATE/tools"
  local rule=/etc/sudoers.d/runbook-devcluster
  printf '%s ALL=(root) NOPASSWD: %s dump --pid *, %s listpids *\n' \
    "$SSH_USER" "$tools/bin/py-spy" "$(command -v scontrol)" >"$rule.tmp"
  chmod 440 "$rule.tmp"
  visudo -cq -f "$rule.tmp" || die "sudoers rule for $SSH_USER rejected by visudo"
  mv "$rule.tmp" "$rule"
}

write_users() {
  # Accounts are the host's, and every node shares them (and /etc/sudoers.d): a node's mount
  # namespace binds only /usr/local/bin, /var/log, /etc/hosts and resolv.conf.
  getent group "$OWNERS_GROUP" >/dev/null || groupadd "$OWNERS_GROUP"
  local u
  for u in "${JOB_USERS[@]}"; do
    id -u "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash -G "$OWNERS_GROUP" "$u"
    usermod -a -G "$OWNERS_GROUP" "$u"
    chmod 700 "/home/$u"
  done
  id -u "$SVC_USER" >/dev/null 2>&1 || useradd -m -s /bin/bash "$SVC_USER"
  # The grants a site writes, the text docs/install.md shows: the service account runs a job's
  # commands as its owner (runbook config show prints this line), and the SSH account reads a
  # job's files as its owner on the nodes ([identity] node_reads = "sudo"). Both only as a
  # member of the owners' group: never root, never a daemon's account.
  local rule=/etc/sudoers.d/runbook-devcluster-owners sb sc sr sa sh
  # Paths as sudo finds the commands on its secure_path, links not resolved: sudo matches a
  # command's base name first (sh is not dash).
  sb=$(PATH=$SECURE command -v sbatch) sc=$(PATH=$SECURE command -v scancel)
  sr=$(PATH=$SECURE command -v scontrol) sa=$(PATH=$SECURE command -v sacct)
  sh=$(PATH=$SECURE command -v sh)
  { printf '%s ALL=(%%%s) NOPASSWD:SETENV: %s, %s, %s, %s, %s\n' \
      "$SVC_USER" "$OWNERS_GROUP" "$sb" "$sc" "$sr" "$sa" "$sh"
    printf '%s ALL=(%%%s) NOPASSWD: %s\n' "$SSH_USER" "$OWNERS_GROUP" "$sh"
  } >"$rule.tmp"
  chmod 440 "$rule.tmp"
  visudo -cq -f "$rule.tmp" || die "sudoers rules for the job owners rejected by visudo"
  mv "$rule.tmp" "$rule"
}

write_venv() {
  # A Python every account may run, with torch: the job owners' jobs and runbook as the service
  # account run from it (the developers' Python lives under root's home, mode 700). runbook is
  # a copy of the checkout's package (sync_src), refreshed on every 'up', so it is never stale.
  local v=$STATE/venv
  if ! "$v/bin/python" -c 'import torch, numpy, click, paramiko, jinja2, yaml' 2>/dev/null; then
    log "making the job owners' Python in $v"
    rm -rf "$v"
    /usr/bin/python3 -m venv "$v"
    "$v/bin/python" -m pip install -q --disable-pip-version-check torch==2.13.0 numpy \
      'click>=8.1' 'paramiko>=3.4' 'jinja2>=3.1' 'PyYAML>=6.0' 'waitress>=2.1' \
      'prometheus_client>=0.17' 2>&1 | grep -v '^WARNING' || true
  fi
  "$v/bin/python" -c 'import torch' 2>/dev/null || die "torch could not be installed into $v"
  # The parser libraries runbook's parse-only hook reads (runbook/asking/_boot.py): the owners'
  # jobs run real programs on them, and runbook asks those programs as their owners (issue 63).
  if ! "$v/bin/python" -c 'import hydra, fire, typer, tyro, simple_parsing, jsonargparse, mmengine, transformers, accelerate, lightning, absl, configargparse' 2>/dev/null; then
    log "adding the parser libraries to $v"
    "$v/bin/python" -m pip install -q --disable-pip-version-check 'jsonargparse[signatures]==4.53.0' \
      hydra-core==1.3.8 fire==0.7.1 typer==0.29.2 tyro==1.0.17 simple-parsing==0.1.9 \
      mmengine-lite==0.10.7 transformers==5.24.0 accelerate==1.15.0 lightning==2.6.6 \
      absl-py==2.5.1 ConfigArgParse==1.9.0 \
      2>&1 | grep -v '^WARNING' || true
  fi
  local site
  site=$("$v/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  printf '%s\n' "$STATE/src" >"$site/runbook-devcluster.pth"
  printf '#!%s\nimport sys\nfrom runbook.entry import main\nsys.exit(main())\n' \
    "$v/bin/python" >"$v/bin/runbook"
  chmod 755 "$v/bin/runbook"
  sync_src
}

sync_src() {
  local src=$STATE/src new=$STATE/src.new
  rm -rf "$new" && mkdir -p "$new"
  cp -r "$HERE/../../runbook" "$new/runbook"
  find "$new" -name __pycache__ -prune -exec rm -rf {} +
  chmod -R a+rX "$new" "$STATE/venv"
  rm -rf "$src" && mv "$new" "$src"
}

start_munge() {
  pid_alive "$STATE/run/munged.pid" && return 0
  mkdir -p /run/munge && chown munge:munge /run/munge && chmod 755 /run/munge
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid --force
  ln -sf /run/munge/munged.pid "$STATE/run/munged.pid"
  wait_for munged 10 munge -n
}

start_mariadb() {
  pid_alive "$STATE/run/mariadb.pid" && return 0
  local dd=$STATE/mysql
  if [[ ! -d $dd/mysql ]]; then
    log "initialising MariaDB in $dd"
    mkdir -p "$dd" && chown mysql:mysql "$dd"
    mariadb-install-db --user=mysql --datadir="$dd" --auth-root-authentication-method=socket \
      --skip-test-db >"$STATE/log/mariadb-install.log" 2>&1
  fi
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
  # slurmdbd connects through the default socket (it passes no socket path); root uses unix_socket auth.
  setsid /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$dd" --skip-networking \
    --socket=/run/mysqld/mysqld.sock --pid-file="$dd/mariadb.pid" --log-error="$dd/mariadb.err" \
    --innodb-buffer-pool-size=64M </dev/null >>"$STATE/log/mariadb.start.log" 2>&1 &
  # mariadbd runs as mysql and cannot write our root-owned run/ and log/: link to its own files.
  ln -sf "$dd/mariadb.pid" "$STATE/run/mariadb.pid"
  ln -sf "$dd/mariadb.err" "$STATE/log/mariadb.log"
  wait_for MariaDB 60 mariadb --socket=/run/mysqld/mysqld.sock -e 'select 1'
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

start_postgres() { # after start_net: it listens on the bridge, where the nodes reach it
  local bin dd=$STATE/pg sock=$STATE/pgsock
  bin=$(pg_bin)
  [[ -n $bin ]] || die "no PostgreSQL server binaries (cluster.sh install)"
  mkdir -p "$sock" && chown postgres:postgres "$sock"
  if [[ ! -s $dd/PG_VERSION ]]; then
    log "initialising PostgreSQL in $dd"
    mkdir -p "$dd" && chown postgres:postgres "$dd" && chmod 700 "$dd"
    runuser -u postgres -- "$bin/initdb" -D "$dd" -A trust -U postgres --no-sync \
      >"$STATE/log/postgres-init.log" 2>&1
    printf '%s\n' 'local all all trust' 'host all all 127.0.0.1/32 trust' \
      "host all all $NET.0/24 trust" >"$dd/pg_hba.conf"
  fi
  if ! runuser -u postgres -- "$bin/pg_ctl" -D "$dd" status >/dev/null 2>&1; then
    runuser -u postgres -- "$bin/pg_ctl" -D "$dd" -l "$dd/server.log" -w -t 60 \
      -o "-p $PG_PORT -k $sock -c listen_addresses=127.0.0.1,$CTLD_ADDR -c fsync=off" start \
      >>"$STATE/log/postgres.start.log" 2>&1 || die "PostgreSQL did not start (see $dd/server.log)"
  fi
  local psql=("$bin/psql" -h "$sock" -p "$PG_PORT" -U postgres -qAt)
  [[ $("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = 'runbook'") == 1 ]] ||
    "${psql[@]}" -c "CREATE ROLE runbook LOGIN" >/dev/null
  [[ $("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'runbook'") == 1 ]] ||
    "${psql[@]}" -c "CREATE DATABASE runbook OWNER runbook" >/dev/null
}

stop_postgres() {
  local bin
  bin=$(pg_bin)
  [[ -n $bin && -s $STATE/pg/PG_VERSION ]] || return 0
  runuser -u postgres -- "$bin/pg_ctl" -D "$STATE/pg" -m fast -w stop >/dev/null 2>&1 || true
}

start_net() {
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  ip addr show dev "$BRIDGE" | grep -q "inet $CTLD_ADDR/" || ip addr add "$CTLD_ADDR/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  local i n ns veth
  for ((i = 1; i <= NODES; i++)); do
    n=$(node_name "$i") ns=rb-$n veth=rbv$(printf '%02d' "$i")
    [[ -e /run/netns/$ns ]] || ip netns add "$ns"
    # A veth left over from a namespace that is gone has no peer in the new one: replace it.
    if ip link show "$veth" >/dev/null 2>&1 && ! ip -n "$ns" link show eth0 >/dev/null 2>&1; then
      ip link del "$veth" 2>/dev/null || true
    fi
    if ! ip link show "$veth" >/dev/null 2>&1; then
      ip link add "$veth" type veth peer name eth0 netns "$ns"
      ip link set "$veth" master "$BRIDGE" up
    fi
    ip -n "$ns" addr show dev eth0 | grep -q "inet $(node_addr "$i")/" ||
      ip -n "$ns" addr add "$(node_addr "$i")/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route replace default via "$CTLD_ADDR"
  done
}

start_node() { # i
  local i=$1 n ns
  n=$(node_name "$i") ns=rb-$n
  pid_alive "$STATE/run/slurmd-$n.pid" && pid_alive "$STATE/run/sshd-$n.pid" && return 0
  stop_pidfile "$STATE/run/slurmd-$n.pid"
  stop_pidfile "$STATE/run/sshd-$n.pid"
  write_node_bin "$n"
  mkdir -p "$STATE/slurm/spool/$n"
  # Every node resolves the node names, as on a real cluster: without it each `sudo` on a node
  # waits for DNS to fail on its own hostname (seconds), which runbook hang's capture pays per rank.
  local j
  { grep -v ' gpu-[0-9]*$' /etc/hosts || true
    for ((j = 1; j <= NODES; j++)); do printf '%s %s\n' "$(node_addr "$j")" "$(node_name "$j")"; done
  } >"$STATE/nodes/$n/hosts"
  # No name server is reachable from a node's namespace: ask one that answers "no" at once
  # (nothing listens on the node's loopback), instead of waiting for the host's to time out.
  # c10d looks up every peer's name at rendezvous (seconds per lookup otherwise).
  printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$STATE/nodes/$n/resolv.conf"
  # nsenter keeps /sys as it is (ip netns exec remounts it and slurmd loses the cgroup mount);
  # unshare gives the node its own hostname and a private mount table for the per-node
  # /usr/local/bin (stand-ins) and /var/log. sshd and slurmd daemonize and keep the namespaces alive.
  setsid nsenter --net="/run/netns/$ns" unshare --uts --mount --propagation private \
    /bin/sh -c '
      set -e
      hostname "$1"
      mount --bind "$2/bin" /usr/local/bin
      mount --bind "$2/log" /var/log
      mount --bind "$2/hosts" /etc/hosts
      mount --bind "$2/resolv.conf" /etc/resolv.conf
      mkdir -p /run/sshd
      /usr/sbin/sshd -f "$2/sshd_config" -E "$3/sshd-$1.log"
      exec slurmd -N "$1"
    ' node "$n" "$STATE/nodes/$n" "$STATE/log" </dev/null >>"$STATE/log/node-$n.start.log" 2>&1
}

is_ready() {
  pid_alive "$STATE/run/slurmctld.pid" && pid_alive "$STATE/run/slurmdbd.pid" || return 1
  local i out
  scontrol show partition shared >/dev/null 2>&1 || return 1  # a config from before it existed
  # A config written by an older cluster.sh (before job_env, cred_expire): restart with this one.
  grep -qx "# $CONFIG_VERSION" /etc/slurm/slurm.conf || return 1
  out=$(sinfo -h -N -o '%N %t' 2>/dev/null) || return 1
  for ((i = 1; i <= NODES; i++)); do
    grep -Eq "^$(node_name "$i") (idle|mix|alloc|comp|drain|drng)$" <<<"$out" || return 1
    (exec 3<>"/dev/tcp/$(node_addr "$i")/22") 2>/dev/null || return 1
  done
  sacct -n -X -j 1 -o JobID >/dev/null 2>&1 || return 1
  "$(pg_bin)/pg_isready" -q -h "$CTLD_ADDR" -p "$PG_PORT" || return 1
}

cmd_up() {
  local t0=$SECONDS
  if is_ready; then
    local i
    for ((i = 1; i <= NODES; i++)); do write_node_bin "$(node_name "$i")"; done
    # The Slurm trigger calls the runbook of whoever brings the cluster up: a cluster left up by
    # another checkout or venv would run that one (or one since deleted).
    write_trigger
    write_users
    write_venv
    log "already up ($NODES nodes); stand-ins, users, the owners' runbook copy and the Slurm trigger refreshed for $(
      python3 -c 'import sys; print(sys.executable)')"
    return 0
  fi
  cmd_down_quiet
  cmd_install
  write_configs
  write_ssh
  write_pyspy
  write_users
  write_venv
  start_munge
  start_net  # first: slurmdbd is reached on the bridge address
  start_mariadb
  stop_pidfile "$STATE/run/slurmdbd.pid"
  slurmdbd
  wait_for slurmdbd 30 sacctmgr -n show cluster
  sacctmgr -n -P show cluster format=cluster | grep -qx "$CLUSTER" ||
    sacctmgr -i add cluster "$CLUSTER" >/dev/null
  start_postgres
  slurmctld
  wait_for slurmctld 30 scontrol ping
  local i
  for ((i = 1; i <= NODES; i++)); do start_node "$i"; done
  # ReturnToService=2 brings nodes back by themselves, but one left DOWN/DRAIN by a previous
  # run's tests is resumed so every 'up' starts from idle nodes.
  wait_for "slurmd registration" 60 bash -c "! sinfo -h -N -o '%t' | grep -Eq 'unk|inval|down\\*'"
  local bad
  bad=$(sinfo -h -N -o '%N %t' | awk '$2 !~ /^(idle|mix|alloc)$/ {print $1}' | sort -u | paste -sd,)
  if [[ -n $bad ]]; then
    # Jobs of the previous run died with its namespaces: down then resume clears COMPLETING.
    scontrol update nodename="$bad" state=down reason="test cluster restart" >/dev/null 2>&1 || true
    scontrol update nodename="$bad" state=resume >/dev/null 2>&1 || true
  fi
  wait_for "cluster" 60 is_ready
  log "up: $NODES nodes ($(sinfo -h -o '%D %t' | paste -sd' ')) in $((SECONDS - t0))s; state in $STATE"
}

cmd_down_quiet() {
  local f n
  for f in "$STATE"/run/slurmd-*.pid "$STATE"/run/sshd-*.pid; do [[ -e $f ]] && stop_pidfile "$f"; done
  stop_pidfile "$STATE/run/slurmctld.pid"
  stop_pidfile "$STATE/run/slurmdbd.pid"
  stop_pidfile "$STATE/run/mariadb.pid"
  stop_postgres
  # munged is shared with anything else on the host that uses munge; leave it to --purge.
  # Everything still living in a node (slurmstepd, job processes) goes with it: left behind in
  # a deleted namespace it could never reach slurmctld again and would hold the node COMPLETING.
  for n in $(ip netns list 2>/dev/null | awk '/^rb-gpu-/{print $1}'); do
    ip netns pids "$n" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip netns del "$n" || true
  done
  # Steps stranded by an earlier harness version sit in namespaces that no longer have a name.
  pkill -KILL -x slurmstepd 2>/dev/null || true
  # A deleted namespace's veth vanishes asynchronously; the next 'up' re-creating it sees
  # "File exists" if we do not wait.
  local deadline=$((SECONDS + 10))
  while ip -o link show 2>/dev/null | grep -q ' rbv[0-9]'; do
    ((SECONDS < deadline)) || break
    sleep 0.1
  done
  ip link del "$BRIDGE" 2>/dev/null || true
}

cmd_down() {
  cmd_down_quiet
  if [[ ${1:-} == --purge ]]; then
    stop_pidfile "$STATE/run/munged.pid"
    # Job ids restart at 1 with a wiped StateSaveLocation, so the accounting DB goes with it.
    rm -rf "$STATE"
    rm -f /etc/sudoers.d/runbook-devcluster /etc/sudoers.d/runbook-devcluster-owners
    log "down, state purged"
  else
    log "down (state kept in $STATE)"
  fi
}

cmd_status() {
  local ok=0 i n
  for f in munged mariadb slurmdbd slurmctld; do
    if pid_alive "$STATE/run/$f.pid"; then echo "$f: running"; else echo "$f: stopped"; ok=1; fi
  done
  for ((i = 1; i <= NODES; i++)); do
    n=$(node_name "$i")
    printf '%s (%s): slurmd %s, sshd %s, slurm state %s\n' "$n" "$(node_addr "$i")" \
      "$(pid_alive "$STATE/run/slurmd-$n.pid" && echo running || echo stopped)" \
      "$(pid_alive "$STATE/run/sshd-$n.pid" && echo running || echo stopped)" \
      "$(sinfo -h -n "$n" -o '%t' 2>/dev/null | head -1 || true)"
  done
  if "$(pg_bin)/pg_isready" -q -h "$CTLD_ADDR" -p "$PG_PORT" 2>/dev/null; then
    echo "postgresql: running ($PG_URL)"
  else
    echo "postgresql: stopped"; ok=1
  fi
  is_ready && echo "ready" || { echo "not ready"; ok=1; }
  return $ok
}

cmd_env() {
  cat <<EOF
RUNBOOK_CLUSTER_STATE=$STATE
RUNBOOK_CLUSTER_NODES=$NODES
RUNBOOK_CLUSTER_SSH_USER=$SSH_USER
RUNBOOK_CLUSTER_SSH_KEY=$STATE/ssh/id_ed25519
RUNBOOK_CLUSTER_KNOWN_HOSTS=$STATE/ssh/known_hosts
RUNBOOK_CLUSTER_JOBS=$STATE/jobs
RUNBOOK_CLUSTER_PG_URL=$PG_URL
RUNBOOK_CLUSTER_HOST_ADDR=$CTLD_ADDR
RUNBOOK_CLUSTER_JOB_USERS=${JOB_USERS[*]}
RUNBOOK_CLUSTER_OWNERS_GROUP=$OWNERS_GROUP
RUNBOOK_CLUSTER_SVC_USER=$SVC_USER
RUNBOOK_CLUSTER_VENV=$STATE/venv
EOF
}

[[ $(id -u) -eq 0 ]] || die "must run as root (it starts daemons and creates network namespaces)"
case ${1:-} in
  install) cmd_install ;;
  up) cmd_up ;;
  down) shift; cmd_down "$@" ;;
  status) cmd_status ;;
  env) cmd_env ;;
  *) echo "usage: $0 install|up|down [--purge]|status|env" >&2; exit 2 ;;
esac
