#!/usr/bin/env bash
# One entry point for a fresh machine:
#   bash scripts/dev.sh run   [chainlit options]  set up, then start the app on http://localhost:8000
#   bash scripts/dev.sh test  [pytest options]    set up (with Debian chromium and llama.cpp), lint, type-check, run every test
#   bash scripts/dev.sh test --fast [options]     the same without the browser and slow tests (a few minutes)
#   bash scripts/dev.sh screenshots [--out DIR]   regenerate docs/*.png from a clean `brainchat --demo` run
# BRAINCHAT_VENV names another virtual environment than .venv (the tests build a runtime-only one).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3.11}
VENV=${BRAINCHAT_VENV:-.venv}
command -v "$PY" >/dev/null 2>&1 || PY=python3

# setup_python TARGET: install TARGET ('.' for the app, '.[dev]' for tests) into $VENV, unless
# $VENV/.brainchat-installed says it is there already for this pyproject.toml (a second start
# installs nothing). '.[dev]' holds everything '.' does, so it satisfies `run` too. It says what it
# does as it goes (a first install is minutes): each stage, each package pip collects, and where
# pip's whole output is kept if it fails.
setup_python() {
  local target=$1 stamp=$VENV/.brainchat-installed hash first="" log=$VENV/pip-install.log
  if [ ! -x "$VENV/bin/python" ]; then
    echo "creating the virtual environment $VENV" >&2
    "$PY" -m venv "$VENV"
  fi
  hash=$(sha256sum pyproject.toml | cut -d' ' -f1)
  if [ -f "$stamp" ] && { grep -qxF ".[dev] $hash" "$stamp" || grep -qxF "$target $hash" "$stamp"; }; then
    return
  fi
  [ -f "$stamp" ] || first=", first time: about 3 minutes"
  echo "installing $target into $VENV: brainchat and its $(direct_dependencies "$target") packages" \
    "with what they need (pyproject.toml is new or changed$first)" >&2
  echo "  upgrading pip" >&2
  "$VENV/bin/python" -m pip install -q --upgrade pip
  # torch is pinned to 2.13.0 (a CPU wheel that pip finds on this machine's disk).
  if ! "$VENV/bin/python" -m pip install --progress-bar off -e "$target" 2>&1 | tee "$log" | pip_lines; then
    echo "the install failed: pip's whole output is in $log" >&2
    exit 1
  fi
  echo "$target $hash" >>"$stamp"
}

# direct_dependencies TARGET: how many packages pyproject.toml names for TARGET ('.' or '.[dev]')
direct_dependencies() {
  "$VENV/bin/python" - "$1" <<'PY' 2>/dev/null || echo "its"
import sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
extra = project.get("optional-dependencies", {}).get("dev", []) if "[dev]" in sys.argv[1] else []
print(len(project["dependencies"]) + len(extra))
PY
}

# pip_lines: pip's output (on stdin) as one line per package collected, a line when it unpacks
# them all, and its errors whole (its warnings stay in the log: a machine's index settings can
# warn once per package)
pip_lines() {
  awk '
    /^Collecting / { n++; printf "  [%d] %s\n", n, $2; fflush(); next }
    /^Installing collected packages: / {
      k = split(substr($0, 32), names, ", ")
      printf "  unpacking %d packages (quiet for a minute or two)...\n", k; fflush(); next
    }
    /^Successfully installed / { printf "  installed %d packages\n", NF - 2; fflush(); next }
    /^(ERROR|error|note|hint)|^ +[×╰│]|^  +\|/ { print; fflush() }
  ' >&2
}

# prebuild_runtime [pytest args]: the runtime-only environment that tests/conftest.py's
# runtime_venv fixture starts the app from, built in the background while chromium, the linters
# and mypy run, under the lock the fixture takes (a fresh clone spent ~50 s of the suite
# building it). Not for a venv of one's own (BRAINCHAT_VENV) nor a run of named test files.
prebuild_runtime() {
  local arg key
  [ -z "${BRAINCHAT_VENV:-}" ] && command -v flock >/dev/null 2>&1 || return 0
  for arg in "$@"; do
    case "$arg" in tests/* | *.py | *.py::*) return 0 ;; esac
  done
  key=$(cat pyproject.toml setup.py | sha256sum | cut -c1-16)  # conftest.install_key()
  mkdir -p .venv-runtime
  (flock .venv-runtime/build.lock env -u PYTHONPATH -u VIRTUAL_ENV -u CI \
    BRAINCHAT_VENV="$PWD/.venv-runtime/$key" bash scripts/dev.sh run --help >/dev/null 2>&1 || true) &
}

# setup_local_runtime: llama-cpp-python's server (the optional extra brainchat[local]) for the
# slow tests that run a real local model (tests/test_localmodels_runtime_slow.py). pip compiles
# llama.cpp once (about 5 minutes on 2 idle cores) and keeps the wheel it built; a failed build is
# a note, never fatal: those tests then skip, saying why.
setup_local_runtime() {
  local stamp=$VENV/.brainchat-installed hash log=$VENV/pip-local.log
  hash=$(sha256sum pyproject.toml | cut -d' ' -f1)
  if [ -f "$stamp" ] && grep -qxF "local $hash" "$stamp"; then return 0; fi
  echo "building llama.cpp for the local-model tests (brainchat[local]; once, about 5 minutes)" >&2
  if "$VENV/bin/python" -m pip install -q --progress-bar off -e '.[local]' >"$log" 2>&1; then
    echo "local $hash" >>"$stamp"
  else
    echo "note: brainchat[local] did not install (pip's output: $log); the local-model tests skip" >&2
  fi
}

# setup_bids_validator: the BIDS validator (npm's bids-validator, pinned) in .tools/, for the test
# that validates written derivatives (tests/test_eeg_bids_validator.py; it skips without it).
# Quick when that version is there; without npm, or when the install fails, a note, never fatal.
BIDS_VALIDATOR_VERSION=1.15.0
setup_bids_validator() {
  local dir=.tools/bids-validator
  local stamp=$dir/node_modules/bids-validator/package.json
  if [ -f "$stamp" ] && grep -q "\"version\": \"$BIDS_VALIDATOR_VERSION\"" "$stamp"; then return 0; fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "note: npm is not on PATH: the BIDS validator test will be skipped" >&2
    return 0
  fi
  mkdir -p "$dir"
  # bounded: a registry that never answers must not hold the test run (it waits for this)
  timeout 600 npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
    "bids-validator@$BIDS_VALIDATOR_VERSION" >/dev/null </dev/null ||
    echo "note: installing bids-validator@$BIDS_VALIDATOR_VERSION failed: its test will be skipped" >&2
}

setup_chromium() {
  if command -v chromium >/dev/null 2>&1; then return; fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  # fonts-noto-cjk: the Chinese interface (and its screenshots) drawn, not as empty boxes
  $sudo apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core fonts-noto-cjk
}

cmd=${1:-run}
shift || true
case "$cmd" in
  run)
    setup_python .
    [ -f .env ] || [[ " $* " == *" --demo "* ]] || echo "note: no .env yet: copy .env.example to .env and set a model (README, Configuration), or try it offline with: bash scripts/dev.sh run --demo"
    # loopback only by default: one local user, no login. To serve other machines set
    # BRAINCHAT_AUTH=password, add accounts (.venv/bin/brainchat users add NAME) and pass --host 0.0.0.0
    exec "$VENV/bin/brainchat" --host "${HOST:-127.0.0.1}" --port "${PORT:-8000}" --headless "$@"
    ;;
  test)
    only=()  # --fast: every test but those marked browser or slow (tests/conftest.py marks them)
    # a third worker fills the cores while the others wait on subprocesses: the fast lane 2
    # workers 4:13, 3 workers 3:45, 4 workers 3:48 (25 Nov 2026); the whole suite 10:20 on 3,
    # 11:41 on 4 (28 Nov, 2 cores, modules grouped again: see pyproject.toml's pytest pin)
    lane_workers=3
    if [ "${1:-}" = "--fast" ]; then
      shift
      only=(-m "not browser and not slow")
    fi
    setup_python '.[dev]'
    [ ${#only[@]} -gt 0 ] || prebuild_runtime "$@"
    [ ${#only[@]} -gt 0 ] || setup_chromium
    setup_bids_validator &  # npm works while the linters and mypy run
    validator=$!
    local_runtime=""
    if [ ${#only[@]} -eq 0 ]; then
      setup_local_runtime &  # compiles while the linters and mypy run
      local_runtime=$!
    fi
    "$VENV/bin/ruff" format --check src tests bench
    "$VENV/bin/ruff" check src tests bench
    "$VENV/bin/mypy" src
    PYTHONPATH=src "$VENV/bin/lint-imports"
    # Most of the suite waits on subprocesses (app processes, MCP servers, chromium), so it runs
    # on pytest-xdist workers; a module that starts an app keeps its tests on one worker
    # (tests/conftest.py groups them). Your own -n (-n 0: in this process) replaces the default.
    wait "$validator" || true
    [ -z "$local_runtime" ] || wait "$local_runtime" || true
    workers=(-n "${BRAINCHAT_TEST_WORKERS:-$lane_workers}" --dist loadgroup)
    for arg in "$@"; do
      case "$arg" in -n | -n* | --numprocesses | --numprocesses=* | no:xdist) workers=() ;; esac
    done
    exec "$VENV/bin/pytest" -p no:cacheprovider ${workers[@]+"${workers[@]}"} ${only[@]+"${only[@]}"} "$@"
    ;;
  screenshots)
    setup_python '.[dev]'
    setup_chromium
    exec "$VENV/bin/python" scripts/screenshots.py "$@"
    ;;
  *)
    echo "usage: bash scripts/dev.sh run|test|screenshots" >&2
    exit 2
    ;;
esac
