# Sandbox tests' machine set-up, sourced by tests/run.sh (idempotent, works on a fresh Debian machine):
# bubblewrap, docker.io and debootstrap from apt; a private dockerd (own data root and socket, started
# with setsid so it never holds CI's terminal); the sandbox image, loaded from $PYCAPSULE_CI_CACHE or
# built once without a registry and saved there. Exports DOCKER_HOST for the tests.
# Stop the engine with `pycapsule_stop_dockerd` (tests/run.sh should trap it on EXIT).
# Also an ordinary account ($PYCAPSULE_TEST_USER) the hostile suite launches bwrap as (unprivileged).

PYCAPSULE_DOCKERD_DIR="${PYCAPSULE_DOCKERD_DIR:-/tmp/pycapsule-dockerd}"
export PYCAPSULE_IMAGE_CACHE="${PYCAPSULE_IMAGE_CACHE:-${PYCAPSULE_CI_CACHE:-$HOME/.cache/pycapsule-ci}/sandbox-image}"

pycapsule_docker_ping() {
  python3 - <<'PY' >/dev/null 2>&1
import docker
docker.from_env(timeout=5).ping()
PY
}

pycapsule_stop_dockerd() {
  local pidfile="$PYCAPSULE_DOCKERD_DIR/dockerd.pid"
  if [ -f "$pidfile" ]; then
    local pid
    pid="$(cat "$pidfile")"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  fi
  # dockerd leaves its network-namespace mount behind (FACTS.md §2)
  grep -o " $PYCAPSULE_DOCKERD_DIR/[^ ]*" /proc/mounts 2>/dev/null | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
}

pycapsule_start_dockerd() {
  pycapsule_stop_dockerd
  mkdir -p "$PYCAPSULE_DOCKERD_DIR/data" "$PYCAPSULE_DOCKERD_DIR/exec"
  rm -f "$PYCAPSULE_DOCKERD_DIR/docker.sock"  # a stale socket from a killed engine blocks the new one
  setsid dockerd --data-root "$PYCAPSULE_DOCKERD_DIR/data" --exec-root "$PYCAPSULE_DOCKERD_DIR/exec" \
    -H "$DOCKER_HOST" --pidfile "$PYCAPSULE_DOCKERD_DIR/dockerd.pid" \
    --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --bridge=none \
    --storage-driver="$1" --log-level=warn \
    >"$PYCAPSULE_DOCKERD_DIR/dockerd.log" 2>&1 </dev/null &
  disown 2>/dev/null || true
  local attempt
  for attempt in $(seq 1 100); do
    pycapsule_docker_ping && return 0
    [ -f "$PYCAPSULE_DOCKERD_DIR/dockerd.pid" ] || [ "$attempt" -lt 25 ] || break  # it died early
    sleep 0.2
  done
  echo "sandbox set-up: dockerd with the $1 storage driver did not come up: $(tail -n 2 "$PYCAPSULE_DOCKERD_DIR/dockerd.log" 2>/dev/null)"
  return 1
}

export PYCAPSULE_TEST_USER="${PYCAPSULE_TEST_USER:-pycapsule-ci}"

pycapsule_test_user_setup() {
  id -u "$PYCAPSULE_TEST_USER" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "sandbox set-up: no user $PYCAPSULE_TEST_USER and not root: the bwrap-user tests will skip (fail in CI)"
    return 0
  fi
  # no home, no login, no supplementary group: an account that owns nothing
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$PYCAPSULE_TEST_USER"
}

pycapsule_sandbox_setup() {
  local missing=()
  command -v bwrap >/dev/null || missing+=(bubblewrap)
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      echo "sandbox set-up: installing ${missing[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
      echo "sandbox set-up: ${missing[*]} missing and not root: those tests will skip (fail in CI)"
    fi
  fi

  pycapsule_test_user_setup
  export DOCKER_HOST="unix://$PYCAPSULE_DOCKERD_DIR/docker.sock"
  if ! pycapsule_docker_ping && command -v dockerd >/dev/null && [ "$(id -u)" = 0 ]; then
    # overlay2 first; vfs (slower, copies the image per container) where / cannot carry overlayfs
    for driver in overlay2 vfs; do
      pycapsule_start_dockerd "$driver" && break
    done
  fi
  if ! pycapsule_docker_ping; then
    echo "sandbox set-up: no Docker engine (see $PYCAPSULE_DOCKERD_DIR/dockerd.log): docker tests will skip (fail in CI)"
    if [ "${CI:-}" = "true" ]; then return 1; fi
    return 0
  fi
  if ! python3 -m pycapsule sandbox build-image; then
    echo "sandbox set-up: the sandbox image could not be built"
    if [ "${CI:-}" = "true" ]; then return 1; fi
  fi
}

pycapsule_sandbox_setup
