#!/usr/bin/env bash
# Peak memory of kubectl rv conflicts --listen under hostile bodies: three
# 63 MiB EventLists of tiny items ({}; of stage Panic; ResponseComplete
# with a null stageTimestamp) and one of an item nested 3,000 deep, sent
# at once over loopback, each sent again while answered 503 (at most 50
# times). Prints each body's answers and the listener's peak RSS and CPU
# from /usr/bin/time -v. The listener needs the token (--listen-token-file).
#
#   hack/bench-listen-hostile.sh
#   RV=/path/to/old/kubectl-rv PLAIN=1 hack/bench-listen-hostile.sh
#       a listener from before the senders were authenticated (plain HTTP,
#       no token: 943241e and older), for a side-by-side figure
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$(mktemp -d /tmp/bench-listen-hostile.XXXXXX)
pid=
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
rv="${RV:-}"
if [ -z "$rv" ]; then
  (cd "$root" && go build -o "$dir/kubectl-rv" ./cmd/kubectl-rv)
  rv="$dir/kubectl-rv"
fi
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
head, tail, size = b'{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[', b']}', 63 << 20
for name, item in [("empty", b'{}'), ("panic", b'{"stage":"Panic","a":[]}'),
                   ("nullts", b'{"stageTimestamp":null,"stage":"ResponseComplete"}')]:
    n = (size - len(head) - len(tail)) // (len(item) + 1)
    with open(f"{d}/{name}.json", "wb") as f:
        f.write(head + b",".join([item] * n) + tail)
with open(f"{d}/deep.json", "wb") as f:
    f.write(head + b"[" * 3000 + b"]" * 3000 + tail)
PY
head -c 24 /dev/urandom | base64 > "$dir/token"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if [ -n "${PLAIN:-}" ]; then
  url="http://127.0.0.1:$port/"
  args=()
else
  url="https://127.0.0.1:$port/"
  args=(--listen-token-file "$dir/token")
fi
/usr/bin/time -v "$rv" conflicts --listen "127.0.0.1:$port" "${args[@]}" -o json >/dev/null 2>"$dir/stderr" &
pid=$!
for _ in $(seq 100); do
  curl -sk -o /dev/null "$url" && break
  sleep 0.1
done
post() {
  local codes="" code
  for _ in $(seq 50); do
    code=$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$dir/token")" \
      -H 'Content-Type: application/json' --data-binary "@$dir/$1.json" "$url" || true)
    codes="$codes $code"
    [ "$code" = 503 ] || [ "$code" = 000 ] || break
    sleep 0.2
  done
  echo "$1:$codes"
}
for b in empty panic nullts deep; do post "$b" & done
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null || true
sleep 1
child=$(pgrep -P "$pid" || true)
kill -INT "${child:-$pid}"
wait "$pid" || true
pid=
grep -E 'received|dropped|refused|skipped|Maximum resident|Elapsed|User time|System time' "$dir/stderr"
