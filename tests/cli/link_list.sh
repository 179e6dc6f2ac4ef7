#!/usr/bin/env bash
# softdpu link list (docs/links.md): every link of the topology with its two ends, socket and memif
# parameters, as a table and as JSON, and each state: down (no socket), not-a-socket, stale (a
# socket file nobody serves), listening (a server waits), connected (a client is on it), and down
# again once the server leaves. The server and client are softdpu's own memif tools.
#   link_list.sh SOFTDPU_CLI TOPOLOGY_DIR
set -uo pipefail
cli=$1
topologies=$2
me=link_list.sh
run_prefix=softdpu-linklist
# shellcheck source=link_common.sh
source "$(dirname "$0")/link_common.sh"

# The JSON listing of the built-in topology: every link, both ends, the memif parameters.
"$cli" link list --json >"$SOFTDPU_RUN_DIR/list.json" || fail "link list --json failed"
python3 - "$SOFTDPU_RUN_DIR" "$SOFTDPU_RUN_DIR/list.json" <<'PY' || fail "unexpected JSON listing"
import json, sys
run_dir, path = sys.argv[1], sys.argv[2]
out = json.load(open(path))
assert out["socket_dir"] == run_dir + "/links", out["socket_dir"]
assert out["topology"] == "<built-in default topology>", out["topology"]
links = {l["name"]: l for l in out["links"]}
assert list(links) == ["hpf0", "hpf1", "hpf0vf0", "hpf0vf1", "hpf1vf0", "p0", "p1", "pf0sf0", "pf1sf0"], list(links)
for name, l in links.items():
    assert l["socket"] == f"{run_dir}/links/{name}.sock", l
    assert (l["buffer_size"], l["ring_size"], l["interface_id"]) == (16384, 1024, 0), l
    assert l["state"] == "down" and l["peers"] == 0, l
    assert l["server"]["role"] == "server" and l["client"]["role"] == "client", l
    assert l["server"]["side"] == "dpu", l
h = links["hpf0"]
assert h["kind"] == "representor"
assert h["server"] == {"side": "dpu", "owner": "hpf0", "iface": "pf0hpf", "role": "server", "counters": None}, h["server"]
assert h["client"] == {"side": "host", "owner": "pf0", "iface": "enp11s0f0np0", "role": "client", "counters": None}, h["client"]
p = links["p0"]
assert p["kind"] == "uplink" and p["client"] == {"side": "outside", "owner": None, "iface": None, "role": "client", "counters": None}, p
PY
# The table: a title, a header, one line per link; no counters ("-") while nothing is attached.
table=$("$cli" link list) || fail "link list failed"
[ "$(printf '%s\n' "$table" | wc -l)" = 12 ] || fail "expected 12 lines in the table: $table"
printf '%s\n' "$table" | grep -Eq "^hpf0 +representor +dpu hpf0 \(pf0hpf\) +host pf0 \(enp11s0f0np0\) +down +- +$SOFTDPU_RUN_DIR/links/hpf0.sock$" ||
	fail "no hpf0 line in: $table"
printf '%s\n' "$table" | grep -Eq "^p1 +uplink +dpu p1 \(p1\) +outside +down +- " || fail "no p1 line in: $table"

# Another topology: its links.
SOFTDPU_TOPOLOGY=$topologies/rich.json "$cli" link list --json | python3 -c '
import json, sys
out = json.load(sys.stdin)
assert out["topology"].endswith("rich.json"), out["topology"]
assert len(out["links"]) > 0' || fail "rich.json: no links"

mkdir -p "$SOFTDPU_RUN_DIR/links"
socket=$SOFTDPU_RUN_DIR/links/hpf1.sock
# A regular file where the socket should be.
: >"$socket"
[ "$(state_of hpf1)" = not-a-socket ] || fail "a regular file is $(state_of hpf1), expected not-a-socket"
rm -f "$socket"
# A socket file whose server has gone.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$socket"
[ "$(state_of hpf1)" = stale ] || fail "a socket nobody serves is $(state_of hpf1), expected stale"
rm -f "$socket"

# A server on the link's socket, then a client.
"$cli" memif sink --role server --socket "$socket" --buffer-size 16384 --quiet --connect-timeout 30 &
pids+=($!)
wait_state hpf1 listening
"$cli" memif gen --role client --socket "$socket" --buffer-size 16384 --rate 200 --duration 20 --quiet &
pids+=($!)
wait_state hpf1 connected
"$cli" link list | grep -Eq "^hpf1 .* connected +- +$socket$" || fail "the table does not show hpf1 connected"
for pid in "${pids[@]}"; do
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
done
pids=()
wait_state hpf1 down
echo "link_list.sh: ok"
