#!/usr/bin/env bash
# The DMA Copy application (samples/dma_copy), built as a user would (installed headers and
# pkg-config only) and run as two processes, host and DPU, over an AF_UNIX socket.
#
#  1. unit checks (CRC32C, chunking, protocol, socket channel, command line): no peer needed;
#  2. negative cases with a misbehaving peer (closed, garbage, silent, wrong version, killed) and a
#     direction mismatch: the other side must exit non-zero with a clear message, in time;
#  3. end to end, both directions, several sizes, checksum verdict and file comparison, and
#     kill -9 of either side in the middle of a transfer.
#
# Part 3 needs doca_mmap_export_pci. While softdpu returns DOCA_ERROR_NOT_SUPPORTED there (export is
# being implemented), the script runs parts 1 and 2, says so, and exits 77, which ctest reports as
# "skipped" (SKIP_RETURN_CODE), never as passed.
set -euo pipefail
build_dir=$1
source_dir=$2
prefix="$build_dir/dma-copy-prefix"
out="$build_dir/dma-copy-bin"

rm -rf "$prefix" "$out"
mkdir -p "$out"
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

app_dir="$source_dir/samples/dma_copy"
cflags=(-std=c11 -Wall -Wextra -Werror -DDOCA_ALLOW_EXPERIMENTAL_API -I "$source_dir/samples/common" -I "$app_dir")
# shellcheck disable=SC2207
libs=($(pkg-config --cflags --libs doca-common doca-dma doca-argp))
common_srcs=("$source_dir"/samples/common/sample_common.c "$source_dir"/samples/common/sample_argp.c)
app_srcs=("$app_dir"/*.c)
part_srcs=()
for src in "${app_srcs[@]}"; do
  [ "$(basename "$src")" = dma_copy.c ] || part_srcs+=("$src")
done

echo "--- building dma_copy and its test programs"
cc "${cflags[@]}" -o "$out/dma_copy" "${app_srcs[@]}" "${common_srcs[@]}" "${libs[@]}"
cc "${cflags[@]}" -o "$out/dma_copy_unit" "$source_dir/tests/samples/dma_copy_unit.c" "${part_srcs[@]}" \
  "${common_srcs[@]}" "${libs[@]}"
cc "${cflags[@]}" -o "$out/dma_copy_fake_peer" "$source_dir/tests/samples/dma_copy_fake_peer.c" \
  "$app_dir/dma_copy_proto.c" "${libs[@]}"
cc "${cflags[@]}" -o "$out/dma_copy_export_probe" "$source_dir/tests/samples/dma_copy_export_probe.c" "${libs[@]}"

app="$out/dma_copy"
fake="$out/dma_copy_fake_peer"
# sun_path holds 107 characters: keep the sockets in a short directory.
work=$(mktemp -d /tmp/dma-copy-test.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

echo "--- unit checks"
"$out/dma_copy_unit"

# Every process gets a hard limit: a hang is a failure (status 124 or 137), never a stuck test.
LIMIT=60
# run_bg SIDE LOG ARGS...: starts one side in the background; $! is its pid.
run_bg() {
  local side=$1 log=$2; shift 2
  SOFTDPU_SIDE=$side timeout -s KILL $LIMIT "$app" --role "$side" "$@" >"$log" 2>&1 &
  pids+=($!)
}
# wait_for PID: sets $status to its exit status (0 when it succeeded). Not in a $(...) subshell:
# only this shell can wait for its children.
wait_for() { status=0; wait "$1" || status=$?; }
now_ms() { date +%s%3N; }
# reap PID: kills it if still running and collects it quietly (no "Killed" line from bash).
reap() { kill -9 "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# expect_failure NAME STATUS LOG PATTERN MAX_SECONDS START_MS: non-zero exit, the clear message, in time.
expect_failure() {
  local name=$1 status=$2 log=$3 pattern=$4 max=$5 start=$6
  local took=$(( $(now_ms) - start ))
  if [ "$status" -eq 0 ]; then fail "$name: exited 0"; cat "$log"; return; fi
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then fail "$name: hung (status $status)"; cat "$log"; return; fi
  if ! grep -q -- "$pattern" "$log"; then fail "$name: no \"$pattern\" in its output"; cat "$log"; return; fi
  if [ "$took" -gt $((max * 1000)) ]; then fail "$name: took $took ms (limit $max s)"; return; fi
  echo "ok: $name: exit $status in $took ms: $(grep -m1 -- "$pattern" "$log" | sed 's/^.*\] *//')"
}

head -c 4096 /dev/urandom >"$work/small"

echo "--- negative cases"
n=0
next_case() { n=$((n + 1)); sock="$work/n$n.sock"; log="$work/n$n.log"; }

# A host whose DPU misbehaves.
for mode in dpu-close dpu-garbage dpu-silent; do
  next_case
  "$fake" "$mode" "$sock" >"$work/n$n.fake.log" 2>&1 & fake_pid=$!; pids+=($fake_pid)
  start=$(now_ms)
  run_bg host "$log" -f "$work/small" -s "$sock" -t 2; wait_for $!
  reap "$fake_pid"
  case $mode in
    dpu-close) pattern="The DPU closed the connection"; max=5 ;;
    dpu-garbage) pattern="Protocol error from the DPU: bad magic"; max=5 ;;
    dpu-silent) pattern="Timed out after 2 s waiting for the DPU"; max=6 ;;
  esac
  expect_failure "host, DPU $mode" "$status" "$log" "$pattern" "$max" "$start"
done

# A DPU whose host misbehaves.
for mode in host-garbage host-version host-vanish; do
  next_case
  start=$(now_ms)
  run_bg dpu "$log" -f "$work/n$n.received" -s "$sock" -t 2; dpu_pid=$!
  "$fake" "$mode" "$sock" >"$work/n$n.fake.log" 2>&1 & fake_pid=$!; pids+=($fake_pid)
  wait_for $dpu_pid
  reap "$fake_pid"
  case $mode in
    host-garbage) pattern="Protocol error from the host: bad magic" ;;
    host-version) pattern="Protocol error from the host: unsupported protocol version" ;;
    host-vanish) pattern="The host closed the connection" ;;
  esac
  expect_failure "DPU, host $mode" "$status" "$log" "$pattern" 6 "$start"
done

# Nobody on the other side.
next_case; start=$(now_ms)
run_bg dpu "$log" -f "$work/n$n.received" -s "$sock" -t 1; wait_for $!
expect_failure "DPU, no host" "$status" "$log" "Timed out after 1 s waiting for the host to connect" 4 "$start"
next_case; start=$(now_ms)
run_bg host "$log" -f "$work/small" -s "$sock" -t 1; wait_for $!
expect_failure "host, no DPU" "$status" "$log" "Cannot connect to the DPU" 4 "$start"

# The DPU is killed (kill -9) while the host waits for its answer. SIGSTOP holds the DPU after it
# listens, so the host is certainly connected and waiting when the DPU dies.
next_case
run_bg dpu "$work/n$n.dpu.log" -f "$work/n$n.received" -s "$sock" -t 5; dpu_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
dpu_real_pid=$(pgrep -P "$dpu_pid" -x dma_copy || echo "$dpu_pid")
kill -STOP "$dpu_real_pid"
run_bg host "$log" -f "$work/small" -s "$sock" -t 5; host_pid=$!
for _ in $(seq 100); do grep -q "Connected to the DPU" "$log" && break; sleep 0.05; done
start=$(now_ms)
kill -9 "$dpu_real_pid"
reap "$dpu_pid"
wait_for $host_pid
expect_failure "host, DPU killed with -9" "$status" "$log" "The DPU closed the connection" 2 "$start"

# Both sides started for different directions: both refuse, and the host says why.
next_case
run_bg dpu "$work/n$n.dpu.log" -d dpu-to-host -f "$work/small" -s "$sock" -t 3; dpu_pid=$!
start=$(now_ms)
run_bg host "$log" -d host-to-dpu -f "$work/small" -s "$sock" -t 3; wait_for $!
expect_failure "host, direction mismatch" "$status" "$log" "The DPU gave up: direction mismatch" 5 "$start"
wait_for $dpu_pid
expect_failure "DPU, direction mismatch" "$status" "$work/n$n.dpu.log" "direction mismatch" 5 "$start"

# A bad command line.
next_case; start=$(now_ms)
status=0; SOFTDPU_SIDE=dpu "$app" --role dpu --file "$work/x" --chunk-size 0 >"$log" 2>&1 || status=$?
expect_failure "bad command line" "$status" "$log" "chunk-size" 2 "$start"

if [ "$failures" -ne 0 ]; then
  echo "dma_copy: $failures negative case(s) failed"
  exit 1
fi

echo "--- end to end"
probe_status=0
SOFTDPU_SIDE=host "$out/dma_copy_export_probe" || probe_status=$?
if [ "$probe_status" -eq 77 ]; then
  echo "SKIPPED: end-to-end DMA Copy: doca_mmap_export_pci returns DOCA_ERROR_NOT_SUPPORTED in this build."
  echo "(unit checks and negative cases passed; the end-to-end transfers run once export is implemented)"
  exit 77
fi
[ "$probe_status" -eq 0 ] || { echo "FAIL: the export probe failed (status $probe_status)"; exit 1; }

# transfer NAME DIRECTION SIZE [DPU ARGS...]: one copy with a fresh random file of SIZE bytes.
transfer() {
  local name=$1 direction=$2 size=$3; shift 3
  local sock="$work/$name.sock" src="$work/$name.src" dst="$work/$name.dst"
  local host_file dpu_file host_status dpu_status
  head -c "$size" /dev/urandom >"$src"
  if [ "$direction" = host-to-dpu ]; then host_file=$src; dpu_file=$dst; else host_file=$dst; dpu_file=$src; fi
  run_bg dpu "$work/$name.dpu.log" -d "$direction" -f "$dpu_file" -s "$sock" "$@"; local dpu_pid=$!
  run_bg host "$work/$name.host.log" -d "$direction" -f "$host_file" -s "$sock"; local host_pid=$!
  wait_for $host_pid; host_status=$status
  wait_for $dpu_pid; dpu_status=$status
  if [ "$host_status" -ne 0 ] || [ "$dpu_status" -ne 0 ]; then
    fail "$name: host exited $host_status, DPU exited $dpu_status"
    sed 's/^/  host| /' "$work/$name.host.log"; sed 's/^/  dpu | /' "$work/$name.dpu.log"; return
  fi
  if ! grep -q "Checksum verdict: MATCH" "$work/$name.host.log" ||
     ! grep -q "Checksum verdict: MATCH" "$work/$name.dpu.log"; then
    fail "$name: no MATCH verdict on both sides"; cat "$work/$name.host.log" "$work/$name.dpu.log"; return
  fi
  if ! cmp -s "$src" "$dst"; then fail "$name: the copy differs from the source"; return; fi
  echo "ok: $name ($direction, $size bytes): $(grep -m1 'DMA .*bytes in' "$work/$name.dpu.log" | sed 's/^.*\] *//')"
  rm -f "$src" "$dst"
}

for direction in host-to-dpu dpu-to-host; do
  # 0 bytes is allowed: a handshake with no export and no DMA task, an empty file at the end.
  transfer "$direction-empty" "$direction" 0
  transfer "$direction-1B" "$direction" 1
  transfer "$direction-odd" "$direction" $((1024 * 1024 * 2 + 12345))
  transfer "$direction-small-chunks" "$direction" $((3 * 1024 * 1024 + 1)) --chunk-size 65536 --inflight 16
  transfer "$direction-one-inflight" "$direction" 100000 --chunk-size 4096 --inflight 1
  transfer "$direction-4MiB" "$direction" $((4 * 1024 * 1024))
done

# kill -9 of either side in the middle of a long transfer (4 KiB chunks, one at a time).
for victim in dpu host; do
  name="kill-$victim"; sock="$work/$name.sock"
  head -c $((64 * 1024 * 1024)) /dev/zero >"$work/$name.src"
  run_bg dpu "$work/$name.dpu.log" -f "$work/$name.dst" -s "$sock" -t 5 --chunk-size 4096 --inflight 1
  dpu_pid=$!
  run_bg host "$work/$name.host.log" -f "$work/$name.src" -s "$sock" -t 5; host_pid=$!
  for _ in $(seq 200); do grep -q "Imported" "$work/$name.dpu.log" && break; sleep 0.02; done
  sleep 0.1
  # The host learns it from the socket; the DPU from its DMA tasks failing (or the socket).
  if [ "$victim" = dpu ]; then
    killed=$dpu_pid; survivor=$host_pid; slog="$work/$name.host.log"; pattern="The DPU closed the connection"
  else
    killed=$host_pid; survivor=$dpu_pid; slog="$work/$name.dpu.log"
    pattern="A DMA task failed\|The host closed the connection\|Failed to send PROGRESS"
  fi
  real=$(pgrep -P "$killed" -x dma_copy || echo "$killed")
  start=$(now_ms)
  kill -9 "$real" 2>/dev/null || true
  reap "$killed"
  wait_for "$survivor"
  if grep -q "Checksum verdict: MATCH" "$slog"; then
    echo "note: $name: the transfer finished before the kill; nothing to check"
  else
    expect_failure "$name: the other side" "$status" "$slog" "$pattern" 12 "$start"
  fi
  rm -f "$work/$name.src" "$work/$name.dst"
done

if [ "$failures" -ne 0 ]; then
  echo "dma_copy: $failures case(s) failed"
  exit 1
fi
echo "dma_copy: unit checks, negative cases and end-to-end transfers passed"
