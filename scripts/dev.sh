#!/usr/bin/env bash
# One entry point for a fresh machine:
#   bash scripts/dev.sh run   [chainlit options]  set up, then start the app on http://localhost:8000
#   bash scripts/dev.sh test  [pytest options]    set up (with Debian chromium), lint, type-check, run every test
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3

setup_python() {
  if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
  fi
  # torch is pinned to 2.13.0 (a CPU wheel that pip finds on this machine's disk).
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[dev]'
}

setup_chromium() {
  if command -v chromium >/dev/null 2>&1; then return; fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
}

cmd=${1:-run}
shift || true
case "$cmd" in
  run)
    setup_python
    [ -f .env ] || { [ -f .env.example ] && echo "note: no .env yet; copy .env.example to .env and set a model (see README)"; }
    exec .venv/bin/brainchat --host 0.0.0.0 --port "${PORT:-8000}" --headless "$@"
    ;;
  test)
    setup_python
    setup_chromium
    .venv/bin/ruff format --check src tests bench
    .venv/bin/ruff check src tests bench
    .venv/bin/mypy src
    PYTHONPATH=src .venv/bin/lint-imports
    exec .venv/bin/pytest -p no:cacheprovider "$@"
    ;;
  *)
    echo "usage: bash scripts/dev.sh run|test" >&2
    exit 2
    ;;
esac
