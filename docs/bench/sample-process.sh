#!/usr/bin/env bash
# Samples a running solve every 10 s until it exits, one line each:
#   unix_seconds rss_kib filesystem_used_mib cpu_ticks
# (cpu_ticks: user + system of all its threads, 100 per second). Usage: sample-process.sh PID DIR
# (DIR: a path on the filesystem whose use is sampled). docs/bench/plot-board33.py draws them.
pid=$1
dir=${2:-.}
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/VmRSS/{print $2}' /proc/"$pid"/status 2>/dev/null)
  used=$(df -B1M --output=used "$dir" | tail -1)
  cpu=$(awk '{print $14+$15}' /proc/"$pid"/stat 2>/dev/null)
  echo "$(date +%s) $rss $used $cpu"
  sleep 10
done
