#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, in a directory of its own: for trying
# retro.sbatch without a real cluster, and for the project's test (common/cli/tests/slurm.rs).
#
#   local-cluster.sh install          apt-get install slurmctld slurmd slurm-client munge (root)
#   local-cluster.sh start DIR        writes DIR/slurm.conf, starts munged, slurmctld, slurmd
#   local-cluster.sh stop DIR         stops the three daemons started in DIR
#
# After `start`, use the cluster with `export SLURM_CONF=DIR/slurm.conf` (sbatch, squeue,
# scancel, sinfo). Nothing outside DIR is touched: its own munge key and socket, its own
# ports (free ones, or SLURMCTLD_PORT / SLURMD_PORT), state, spool and logs; the daemons run
# as the current user, which must be root (slurmd starts jobs as their submitter).
# Plugins are the ones that work in a container or VM without systemd or cgroup delegation:
# proctrack/linuxproc, task/none, jobacct_gather/none, select/cons_tres with memory as a
# consumable resource (so that `sbatch --mem` sets SLURM_MEM_PER_NODE).
set -euo pipefail

die() {
    echo "local-cluster.sh: error: $*" >&2
    exit 1
}

# A TCP port nobody listens on (from 40000 up; Slurm needs two).
free_port() {
    local port
    for port in $(seq "$1" 60000); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
    die "no free TCP port above $1"
}

# Polls `$@` every 0.2 s for up to $1 seconds (first argument), then fails with $2.
wait_for() {
    local seconds=$1 what=$2
    shift 2
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || die "timed out after ${seconds}s waiting until $what"
        sleep 0.2
    done
}

install() {
    local missing=()
    command -v munged >/dev/null || missing+=(munge)
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v sbatch >/dev/null || missing+=(slurm-client)
    ((${#missing[@]} == 0)) && return 0
    [[ $(id -u) == 0 ]] || die "${missing[*]} missing, and only root can install them (apt-get)"
    command -v apt-get >/dev/null || die "${missing[*]} missing, and there is no apt-get"
    echo "local-cluster.sh: installing ${missing[*]} (apt-get)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
        { apt-get update >&2 && apt-get install -y --no-install-recommends "${missing[@]}" >&2; } ||
        die "apt-get could not install ${missing[*]}"
}

start() {
    local dir=$1
    [[ $(id -u) == 0 ]] || die "start needs root (slurmd runs jobs as their submitter)"
    for cmd in munged slurmctld slurmd sbatch sinfo; do
        command -v "$cmd" >/dev/null || die "$cmd not found: run '$0 install' first"
    done
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [[ -e $dir/slurm.conf ]] && die "$dir/slurm.conf exists: stop that cluster first ('$0 stop $dir') or use an empty directory"
    mkdir -p "$dir"/{munge,state,spool,log}
    chmod 700 "$dir/munge"
    # munged: its own key, socket, pid, seed and log file.
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$dir/munge/munge.key"
    munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
        --log-file="$dir/log/munged.log" ||
        die "munged did not start; see $dir/log/munged.log"
    wait_for 10 "munged's socket exists" test -S "$dir/munge/munge.socket"

    local host ctld_port slurmd_port node
    host=$(hostname -s 2>/dev/null || uname -n)
    ctld_port=${SLURMCTLD_PORT:-$(free_port 40000)}
    slurmd_port=${SLURMD_PORT:-$(free_port $((ctld_port + 1)))}
    # This machine as slurmd sees it (CPUs, sockets, cores, memory), reachable on loopback.
    node=$(slurmd -C | head -n1)
    [[ $node == NodeName=* ]] || die "slurmd -C printed no node line: $node"
    node="NodeName=$host NodeAddr=127.0.0.1 ${node#NodeName=* }"
    cat >"$dir/slurm.conf" <<EOF
# Written by deploy/slurm/local-cluster.sh: a one-node cluster on loopback.
ClusterName=retro-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
KillWait=10
MinJobAge=600
SchedulerType=sched/backfill
$node State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF=$dir/slurm.conf
    slurmctld -f "$SLURM_CONF" -i || die "slurmctld did not start; see $dir/log/slurmctld.log"
    slurmd -f "$SLURM_CONF" -N "$host" || die "slurmd did not start; see $dir/log/slurmd.log"
    # Ready when the node is idle (not down, drained or not responding).
    wait_for 60 "the node is idle (see $dir/log/slurmctld.log and slurmd.log)" \
        bash -c "sinfo -h -N -o %t | grep -qx idle"
    echo "Slurm cluster up in $dir: export SLURM_CONF=$SLURM_CONF"
}

stop() {
    local dir=$1 name pidfile pid
    # Jobs first, so that their processes (ended by slurmstepd) do not outlive the cluster.
    if [[ -s $dir/slurmctld.pid ]] && kill -0 "$(<"$dir/slurmctld.pid")" 2>/dev/null; then
        export SLURM_CONF=$dir/slurm.conf
        scancel --full --user="$(id -un)" 2>/dev/null || true
        for _ in $(seq 150); do
            [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
            sleep 0.2
        done
    fi
    for name in slurmd slurmctld munge/munged; do
        pidfile=$dir/$name.pid
        [[ -s $pidfile ]] || continue
        pid=$(<"$pidfile")
        if kill -TERM "$pid" 2>/dev/null; then
            for _ in $(seq 50); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
            kill -KILL "$pid" 2>/dev/null || true
        fi
        rm -f "$pidfile"
    done
    mv -f "$dir/slurm.conf" "$dir/slurm.conf.stopped" 2>/dev/null || true
}

case ${1:-} in
install) install ;;
start | stop)
    [[ $# == 2 ]] || die "usage: $0 $1 DIR"
    "$1" "$2"
    ;;
*) die "usage: $0 install | start DIR | stop DIR" ;;
esac
