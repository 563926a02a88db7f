#!/usr/bin/env bash
# Footprint of boinc-rs beside Debian's BOINC client (issue "The host service",
# footprint acceptance): RSS, threads and CPU seconds of each client process, sampled
# from /proc, first idle (attached to a local project with no work), then with two tasks
# each; prints a side-by-side table. Everything runs on 127.0.0.1 in a temporary
# directory, which is removed at the end.
#
#   scripts/footprint.sh [--minutes N] [--task-minutes N] [--only boinc-rs|boinc] BOINC_RS
#
# BOINC_RS is a boinc-rs binary (a release build for figures worth quoting). It also
# serves the project (`boinc-rs project-server`). The clients run as
#   boinc-rs run --dir D1 --gui-rpc-port P1        (attached with boinc-rs attach)
#   boinc --dir D2 --gui_rpc_port P2 --allow_multiple_clients   (Debian's boinc-client)
# both with cc_config.xml (ncpus 2, no GPUs, no info fetch) and preferences that compute
# while the machine is busy. --only runs one of them.
set -euo pipefail

minutes=10
task_minutes=5
only=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --minutes) minutes="$2"; shift 2 ;;
        --task-minutes) task_minutes="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) break ;;
    esac
done
[[ $# -eq 1 ]] || { echo "usage: $0 [--minutes N] [--task-minutes N] [--only boinc-rs|boinc] BOINC_RS" >&2; exit 2; }
boinc_rs="$(realpath "$1")"
[[ -x "$boinc_rs" ]] || { echo "$boinc_rs is not an executable" >&2; exit 2; }
if [[ "$only" != "boinc-rs" ]] && ! command -v boinc >/dev/null; then
    echo "Debian's boinc is not installed: apt-get install boinc-client (or --only boinc-rs)" >&2
    exit 2
fi

work="$(mktemp -d -t boinc-footprint.XXXXXX)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    sleep 2
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
clk_tck="$(getconf CLK_TCK)"

# The client process's RSS (KiB), threads and CPU seconds so far (user + system, its
# own: the apps it runs are not counted).
sample() {
    local pid="$1"
    local rss threads ticks
    rss="$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")"
    threads="$(awk '/^Threads:/ {print $2}' "/proc/$pid/status")"
    # Fields after the command name (which may hold spaces): utime is the 12th, stime 13th.
    ticks="$(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')"
    echo "$rss $threads $(awk -v t="$ticks" -v hz="$clk_tck" 'BEGIN {printf "%.2f", t / hz}')"
}

# Samples each client every 5 s for $2 minutes into $work/$1.<client>; the phase's
# figures are the mean and peak RSS, the peak thread count and the CPU seconds used
# within the window.
measure() {
    local phase="$1" span="$2"
    local end=$(( $(date +%s) + span * 60 ))
    while [[ $(date +%s) -lt $end ]]; do
        for client in "${!client_pid[@]}"; do
            local pid="${client_pid[$client]}"
            kill -0 "$pid" 2>/dev/null || { echo "$client (pid $pid) died during $phase; its log: $work/$client.log" >&2; tail -20 "$work/$client.log" >&2; exit 1; }
            sample "$pid" >> "$work/$phase.$client"
        done
        sleep 5
    done
}

summarise() {
    local phase="$1" span="$2" client="$3"
    awk -v phase="$phase" -v client="$client" -v span="$span" '
        NR == 1 { cpu0 = $3 }
        { rss += $1; n++; if ($1 > peak) peak = $1; if ($2 > threads) threads = $2; cpu = $3 }
        END {
            used = cpu - cpu0
            printf "%-8s %-9s %10.1f %10.1f %8d %10.2f %12.1f\n",
                phase, client, rss / n / 1024, peak / 1024, threads, used, used * 60 / span
        }' "$work/$phase.$client"
}

write_cc_config() {
    mkdir -p "$1"
    cat > "$1/cc_config.xml" <<'XML'
<cc_config>
  <options>
    <ncpus>2</ncpus>
    <no_gpus>1</no_gpus>
    <no_info_fetch>1</no_info_fetch>
  </options>
</cc_config>
XML
    # Compute whatever else the machine does: BOINC's default suspends its tasks while
    # other programs use more than a quarter of the CPU.
    cat > "$1/global_prefs_override.xml" <<'XML'
<global_preferences>
  <suspend_cpu_usage>0</suspend_cpu_usage>
  <run_if_user_active>1</run_if_user_active>
  <max_ncpus_pct>100</max_ncpus_pct>
</global_preferences>
XML
}

# The project: no work at first.
project_port="$(free_port)"
"$boinc_rs" project-server --dir "$work/project" --port "$project_port" --jobs 0 \
    --max-jobs-per-cpu 1 > "$work/project.log" 2>&1 &
project_pid=$!
pids+=("$project_pid")
for _ in $(seq 100); do [[ -s "$work/project/url" ]] && break; sleep 0.2; done
url="$(cat "$work/project/url")"
auth="footprint"
echo "project: $url (no work)" >&2

declare -A client_pid
declare -A gui_port
if [[ "$only" != "boinc" ]]; then
    write_cc_config "$work/boinc-rs"
    "$boinc_rs" attach --dir "$work/boinc-rs" "$url" "$auth" > /dev/null
    gui_port[boinc-rs]="$(free_port)"
    "$boinc_rs" run --dir "$work/boinc-rs" --gui-rpc-port "${gui_port[boinc-rs]}" \
        > "$work/boinc-rs.log" 2>&1 &
    client_pid[boinc-rs]=$!
    pids+=("$!")
fi
if [[ "$only" != "boinc-rs" ]]; then
    write_cc_config "$work/boinc"
    # The account file in the format both clients read, before the client starts.
    "$boinc_rs" attach --dir "$work/boinc" "$url" "$auth" > /dev/null
    gui_port[boinc]="$(free_port)"
    boinc --dir "$work/boinc" --gui_rpc_port "${gui_port[boinc]}" --allow_multiple_clients \
        > "$work/boinc.log" 2>&1 &
    client_pid[boinc]=$!
    pids+=("$!")
fi

# Start-up (benchmarks, first scheduler RPC) is not part of the idle figures.
sleep 60
echo "idle: sampling for $minutes min" >&2
measure idle "$minutes"

# Two tasks each: the same project, now with two long jobs per client and one job in
# progress per CPU of the two each client reports: each client is sent two.
kill -TERM "$project_pid"; wait "$project_pid" 2>/dev/null || true
job_seconds=$(( (task_minutes + 5) * 60 ))
"$boinc_rs" project-server --dir "$work/project" --port "$project_port" \
    --jobs $(( 2 * ${#client_pid[@]} )) --job-seconds "$job_seconds" --max-jobs-per-cpu 1 \
    >> "$work/project.log" 2>&1 &
project_pid=$!
pids+=("$project_pid")
sleep 2
for client in "${!client_pid[@]}"; do
    if [[ "$client" == boinc ]]; then
        boinccmd --host "127.0.0.1:${gui_port[boinc]}" --passwd "$(cat "$work/boinc/gui_rpc_auth.cfg")" \
            --project "$url" update
    else
        "$boinc_rs" project "$url" update --port "${gui_port[boinc-rs]}" --dir "$work/boinc-rs"
    fi
done
echo "waiting for two tasks in each client" >&2
sleep 90
echo "2 tasks: sampling for $task_minutes min" >&2
measure tasks "$task_minutes"
for client in "${!client_pid[@]}"; do
    # pgrep fails when it finds nothing, which must not end the script here.
    running="$( (pgrep -P "${client_pid[$client]}" || true) | wc -l)"
    echo "$client runs $running app processes" >&2
done

printf "%-8s %-9s %10s %10s %8s %10s %12s\n" phase client "RSS MB" "peak MB" threads "CPU s" "CPU s/hour"
for phase in idle tasks; do
    span="$minutes"; [[ "$phase" == tasks ]] && span="$task_minutes"
    for client in boinc-rs boinc; do
        [[ -s "$work/$phase.$client" ]] && summarise "$phase" "$span" "$client"
    done
done
