#!/usr/bin/env bash
# Builds the retro image (deploy/Containerfile) on a machine that cannot pull base images, then
# runs a coordinator and two workers from it, each in its own container, solves BOARD25 through
# them and checks the tables are byte-identical to an in-process solve (also run in the image).
#
#   deploy/container/run-local.sh [WORKDIR]       (default: target/container; run as root)
#
# Steps, each skipped when its result is already there:
#   1. WORKDIR/rootfs: Debian bookworm (debootstrap --variant=minbase), imported as
#      localhost/retro-debian:bookworm: the runtime base (instead of debian:bookworm-slim).
#   2. WORKDIR/builder: the same plus gcc and libc6-dev and this machine's Rust toolchain
#      (`rustc --print sysroot`) and CA certificates (/usr/local/share/ca-certificates),
#      imported as localhost/retro-rust:bookworm (instead of rust:1-bookworm). The crates come
#      from crates.io during the build. Delete the image to rebuild it.
#   3. podman build -f deploy/Containerfile -t localhost/retro:local (multi-stage).
#   4. Containers (host network, loopback): coordinator, worker 1, worker 2, then
#      `retro submit --wait` and `retro solve --in-process`; tables compared; metrics read.
# The containers are removed at the end, also on failure. Needs podman, runc and debootstrap
# (apt-get install podman buildah runc debootstrap). On a machine that can pull images, build
# with plain `podman build -f deploy/Containerfile -t retro .` instead of steps 1-3.
#
# PODMAN_FLAGS (default "--runtime runc") and CONTAINER_FLAGS (default: explicit ulimits below
# the host's) are for sandboxes such as gVisor, where crun cannot set up cgroups and raising
# RLIMIT_NPROC is refused; set them to "" elsewhere.
set -euo pipefail

die() {
    echo "run-local.sh: error: $*" >&2
    exit 1
}
step() { echo "run-local.sh: $(date -u +%T) $*"; }

repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$repo/target/container}
mkdir -p "$work"
work=$(cd "$work" && pwd)
[[ $(id -u) == 0 ]] || die "run me as root (debootstrap, chroot and podman's root storage)"
for cmd in podman debootstrap runc; do
    command -v "$cmd" >/dev/null || die "$cmd not found: apt-get install podman buildah runc debootstrap"
done
read -r -a podman_flags <<<"${PODMAN_FLAGS---runtime runc}"
read -r -a flags <<<"${CONTAINER_FLAGS---ulimit nofile=$(ulimit -Hn):$(ulimit -Hn) --ulimit nproc=4096:4096}"
pm() { podman "${podman_flags[@]}" "$@"; }
image_exists() { pm image exists "$1"; }

# 1. The runtime base.
if ! image_exists localhost/retro-debian:bookworm; then
    if [[ ! -x $work/rootfs/bin/sh ]]; then
        step "debootstrap bookworm into $work/rootfs (a few minutes)"
        rm -rf "$work/rootfs"
        debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian \
            >"$work/debootstrap.log" 2>&1 || die "debootstrap failed; see $work/debootstrap.log"
    fi
    step "importing localhost/retro-debian:bookworm"
    tar -C "$work/rootfs" -c . | pm import --quiet - localhost/retro-debian:bookworm >/dev/null
fi

# 2. The build base: gcc, libc6-dev and this machine's Rust toolchain.
if ! image_exists localhost/retro-rust:bookworm; then
    sysroot=$(rustc --print sysroot) || die "no rustc on this machine to put in the build image"
    if [[ ! -x $work/builder/usr/bin/gcc ]]; then
        step "making $work/builder: the root filesystem plus gcc and libc6-dev"
        rm -rf "$work/builder"
        cp -a "$work/rootfs" "$work/builder"
        cp /etc/resolv.conf "$work/builder/etc/resolv.conf"
        chroot "$work/builder" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev ca-certificates' \
            >"$work/builder-apt.log" 2>&1 || die "apt-get in the build root failed; see $work/builder-apt.log"
    fi
    # This machine's own CA certificates (a network whose HTTPS goes through an intercepting
    # proxy): the build downloads crates from crates.io.
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        step "adding this machine's CA certificates (/usr/local/share/ca-certificates) to the build root"
        cp /usr/local/share/ca-certificates/*.crt "$work/builder/usr/local/share/ca-certificates/"
        chroot "$work/builder" update-ca-certificates >/dev/null 2>&1 || die "update-ca-certificates failed in the build root"
    fi
    step "copying the Rust toolchain $sysroot into the build root"
    rm -rf "$work/builder/usr/local/rust"
    mkdir -p "$work/builder/usr/local/rust" "$work/builder/usr/local/cargo"
    cp -a "$sysroot/bin" "$sysroot/lib" "$work/builder/usr/local/rust/"
    step "importing localhost/retro-rust:bookworm"
    tar -C "$work/builder" -c . | pm import --quiet \
        --change "ENV PATH=/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        --change "ENV CARGO_HOME=/usr/local/cargo" - localhost/retro-rust:bookworm >/dev/null
fi

# 3. The image.
step "podman build -f deploy/Containerfile -t localhost/retro:local (log: $work/build.log)"
started=$SECONDS
pm build "${flags[@]}" --network host -f "$repo/deploy/Containerfile" \
    --build-arg RUST_IMAGE=localhost/retro-rust:bookworm \
    --build-arg RUNTIME_IMAGE=localhost/retro-debian:bookworm \
    -t localhost/retro:local "$repo" >"$work/build.log" 2>&1 ||
    die "podman build failed; the end of $work/build.log: $(tail -n 20 "$work/build.log")"
step "image built in $((SECONDS - started)) s: $(pm image inspect localhost/retro:local --format '{{.Size}}') bytes"
user=$(pm image inspect localhost/retro:local --format '{{.Config.User}}')
[[ $user == 10001:10001 ]] || die "the image runs as '$user', not the non-root user 10001"

# 4. A coordinator and two workers, one container each, sharing the data directory.
data=$work/data
rm -rf "$data"
mkdir -p "$data"
chown 10001:10001 "$data"
port=${RETRO_PORT:-28051}
metrics=${RETRO_METRICS_PORT:-28052}
names=(retro-local-coordinator retro-local-worker-1 retro-local-worker-2)
cleanup() { pm rm -f -t 2 "${names[@]}" >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup
run() { pm run "${flags[@]}" --network host -v "$data:/data" "$@"; }
url=http://127.0.0.1:$port
step "starting the coordinator and two workers"
run -d --name "${names[0]}" localhost/retro:local \
    coordinator --data /data --listen "127.0.0.1:$port" --metrics "127.0.0.1:$metrics" >/dev/null
for _ in $(seq 100); do
    [[ -s $data/token ]] && break
    sleep 0.2
done
[[ -s $data/token ]] || die "the coordinator wrote no token: $(pm logs "${names[0]}" 2>&1 | tail -n 5)"
for i in 1 2; do
    run -d --name "retro-local-worker-$i" localhost/retro:local \
        worker --coordinator "$url" --token-file /data/token --threads 1 --memory-budget 4GiB \
        --name "container-$i" >/dev/null
done
step "retro submit --wait (BOARD25)"
started=$SECONDS
run --rm localhost/retro:local retro submit --coordinator "$url" --token-file /data/token --wait |
    tee "$work/submit.out"
step "solved through the containers in $((SECONDS - started)) s"
job_dir=$data/jobs/000001
step "retro solve --in-process (the reference, in a container too)"
run --rm localhost/retro:local retro solve --in-process --quiet --out /data/reference >/dev/null \
    2>"$work/reference.log" || die "the in-process solve failed; see $work/reference.log"
compared=0
for file in "$data"/reference/*.tbl "$data/reference/manifest.json" "$data/reference/counts.csv"; do
    cmp -s "$file" "$job_dir/$(basename "$file")" || die "$(basename "$file") differs between $job_dir and $data/reference"
    compared=$((compared + 1))
done
step "$compared files byte-identical ($job_dir and the in-process solve)"
scrape=$(run --rm localhost/retro:local bash -c "exec 3<>/dev/tcp/127.0.0.1/$metrics && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3")
grep -q '^retro_tasks_completed_total' <<<"$scrape" || die "no retro_tasks_completed_total in the metrics: $scrape"
grep '^retro_tasks{state="done"}\|^retro_workers' <<<"$scrape"
for name in "${names[@]}"; do
    who=$(pm exec "$name" id -u 2>/dev/null || echo "?")
    step "$name ran as uid $who"
    [[ $who == 10001 ]] || die "$name did not run as uid 10001"
done
step "OK"
