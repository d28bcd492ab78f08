#!/usr/bin/env bash
# Build weight: what prompt-tester costs a user's crate to build, against a floor.
#
# The floor (scripts/build-weight/floor) is a crate whose one test target uses the packages any harness
# of prompt-tester's shape compiles: libtest-mimic, tokio, reqwest on rustls with ring, serde, toml,
# inventory, anyhow, owo-colors, dotenvy, rand, with the features prompt-tester asks of them. The user
# crate is a new crate whose dev-dependencies are prompt-tester (a path dependency on the checkout) and
# anyhow (the quick start uses it; prompt-tester builds it anyway), with the README's one-test
# `harness = false` target (its quick start's code, taken from README.md), built with the default
# features (`default`) and with `default-features = false` (`minimal`). Cargo compiles a path
# dependency incrementally, as it does the user's own code, but a package from crates.io in one piece:
# the user crate's manifest turns incremental compilation off for prompt-tester's packages, so that they
# build as they do for a user who takes them from crates.io (the floor's packages all come from there).
# Incremental compilation splits a crate into more codegen units, each with its own copy of the debug
# information of the types it uses: it made the `minimal` test binary 151 MB instead of 139 MB, and
# the one-line rebuild links that binary.
#
# Each run builds each crate cold (`cargo test --no-run` into a fresh CARGO_TARGET_DIR, the dev profile
# a `cargo test` uses; sources already downloaded), then rebuilds after a one-line edit of the test
# file, several times (a rebuild takes a second or two, so one sample says little on a shared machine).
# All crates build with the checkout's Cargo.lock and toolchain file, so they compile the same versions.
# Timings are /usr/bin/time -v's wall clock and user+system CPU seconds; crates are cargo's `Compiling`
# lines; the binary is the test executable cargo names. The summary gives min / median / max over the
# runs and the ratios of the medians to the floor's. On a machine shared with other builds the CPU
# seconds vary much less than the wall clock. The checkout must not change while the script runs (the
# user crate's path dependency would no longer match its lock file): measure a clone to keep working.
#
# Usage: scripts/build-weight.sh [--runs N] [--rebuilds N] [--checkout DIR] [--before DIR] [--only "..."]
#   --runs      runs of every build (default 3); the crates take turns within a run
#   --rebuilds  one-line rebuilds after each cold build (default 5); the rebuild figures are over all
#   --checkout  the prompt-tester checkout the user crate depends on (default: this one); the floor
#               always comes from this checkout, built with the other checkout's Cargo.lock
#   --before    also build `before`: the user crate on another checkout (an older commit) with its
#               default features and its own Cargo.lock, for a before/after comparison in one session
#   --only      the crates to build (`minimal` needs a checkout with features)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
checkout=$root
runs=3
rebuilds=5
only="floor default minimal"
before=""
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --rebuilds) rebuilds=$2; shift 2 ;;
    --checkout) checkout=$(cd "$2" && pwd); shift 2 ;;
    --before) before=$(cd "$2" && pwd); shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
for count in "--runs $runs" "--rebuilds $rebuilds"; do
  case ${count#* } in
    '' | 0 | *[!0-9]*) echo "${count% *} takes a whole number from 1 (got '${count#* }')" >&2; exit 2 ;;
  esac
done
for name in $only; do
  case $name in
    floor | default | minimal) ;;
    before) [ -n "$before" ] || { echo "--only before needs --before DIR (the older checkout)" >&2; exit 2; } ;;
    *) echo "--only: unknown crate '$name' (floor, default, minimal, before)" >&2; exit 2 ;;
  esac
done
if [ -n "$before" ]; then case " $only " in *" before "*) ;; *) only="$only before" ;; esac; fi
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time; Debian: apt-get install time)" >&2; exit 1; }
if [ -n "${RUSTC_WRAPPER:-}${CARGO_BUILD_RUSTC_WRAPPER:-}" ]; then
  echo "note: ignoring the compiler wrapper (RUSTC_WRAPPER): a cached build is not a cold build" >&2
  unset RUSTC_WRAPPER CARGO_BUILD_RUSTC_WRAPPER
fi
export CARGO_TERM_COLOR=never
work=$(mktemp -d "${TMPDIR:-/tmp}/build-weight.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The crate `$1` in $work/$1, with its checkout's lock file and toolchain.
setup() {
  local name=$1 dir=$work/$1 from=$checkout
  [ "$name" = before ] && from=$before
  if [ "$name" = floor ]; then
    cp -r "$root/scripts/build-weight/floor" "$dir"
  else
    local features=""
    [ "$name" = minimal ] && features=", default-features = false"
    mkdir -p "$dir/src" "$dir/tests"
    cat >"$dir/Cargo.toml" <<EOF
[package]
name = "build-weight-user"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dev-dependencies]
prompt-tester = { path = "$from"$features }
anyhow = "1"

[[test]]
name = "prompts"
path = "tests/prompts.rs"
harness = false
EOF
    # prompt-tester's packages as a crates.io dependency builds them: not incrementally (see above).
    local package
    for package in prompt-tester prompt-tester-macros prompt-tester-keys; do
      if grep -qs "^name = \"$package\"" "$from/Cargo.toml" "$from/macros/Cargo.toml" "$from/keys/Cargo.toml"; then
        printf '\n[profile.dev.package.%s]\nincremental = false\n' "$package" >>"$dir/Cargo.toml"
      fi
    done
    echo '//! The crate under test (empty: what counts is its test target).' >"$dir/src/lib.rs"
    # The README's quick start as a user copies it; its first check gets an `edit N` message, the
    # string the one-line edit below changes.
    awk '/^```rust/ { block = ""; inside = 1; next }
         inside && /^```/ { inside = 0; if (block ~ /fn summary_mentions_alice/) { printf "%s", block; exit } next }
         inside { block = block $0 "\n" }' "$root/README.md" >"$dir/tests/prompts.rs"
    grep -q 'ensure!(!run.output.is_empty());' "$dir/tests/prompts.rs" ||
      { echo "README.md's quick start (fn summary_mentions_alice) has no 'ensure!(!run.output.is_empty());' line to edit" >&2; exit 1; }
    sed -i 's/ensure!(!run.output.is_empty());/ensure!(!run.output.is_empty(), "edit 0");/' "$dir/tests/prompts.rs"
  fi
  cp "$from/Cargo.lock" "$dir/"
  [ -f "$from/rust-toolchain.toml" ] && cp "$from/rust-toolchain.toml" "$dir/"
  # Downloads (and trims the lock file) now, so that no build below waits for the network.
  (cd "$dir" && cargo fetch --quiet)
}

# Seconds from /usr/bin/time's `h:mm:ss` or `m:ss.ss`.
wall_seconds() { awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s }' "$1"; }
cpu_seconds() { awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$1"; }

# Builds crate `$1` in target dir `$2`; appends "crates wall cpu bytes" to $work/$1.$3.
build() {
  local name=$1 target=$2 kind=$3 dir=$work/$1 log=$work/$1.log
  (cd "$dir" && CARGO_TARGET_DIR=$target /usr/bin/time -v -o "$work/time.txt" \
    cargo test --no-run --frozen) >"$log" 2>&1 || { cat "$log" >&2; echo "build of $name failed" >&2; exit 1; }
  local crates exe bytes
  crates=$(grep -c '^ *Compiling ' "$log" || true)
  exe=$(sed -n 's/^ *Executable tests\/prompts.rs (\(.*\))$/\1/p' "$log")
  bytes=$(stat -c %s "$exe")
  echo "$crates $(wall_seconds "$work/time.txt") $(cpu_seconds "$work/time.txt") $bytes" >>"$work/$name.$kind"
  printf '  %-8s %-8s %4s crates  %6ss wall  %6ss cpu  %5.1f MB  (load %s)\n' "$name" "$kind" "$crates" \
    "$(wall_seconds "$work/time.txt")" "$(cpu_seconds "$work/time.txt")" "$(echo "$bytes" | awk '{ print $1 / 1e6 }')" \
    "$(cut -d' ' -f1 /proc/loadavg)"
}

# "min median max" of column `$2` of file `$1`.
stats() { awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%g %g %g", v[1], m, v[NR] }'; }
median() { stats "$1" "$2" | awk '{ print $2 }'; }

commit() { git -C "$1" rev-parse --short HEAD 2>/dev/null || echo '?'; }
echo "build weight: prompt-tester at $checkout ($(commit "$checkout"))${before:+, before: $before ($(commit "$before"))}; $runs run(s), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for name in $only; do setup "$name"; done
for run in $(seq 1 "$runs"); do
  echo "run $run"
  for name in $only; do
    target=$work/target-$name
    rm -rf "$target"
    build "$name" "$target" cold
    # The one-line edit: the test's `edit N` string.
    for edit in $(seq 1 "$rebuilds"); do
      sed -i "s/\"edit [0-9]*\"/\"edit $run$edit\"/" "$work/$name/tests/prompts.rs"
      build "$name" "$target" rebuild
    done
    rm -rf "$target"
  done
done

echo
echo "summary over $runs run(s), $((runs * rebuilds)) rebuilds: min/median/max; seconds; the binary is the test executable (debug profile)"
printf '%-8s %6s  %-18s %-18s %-15s %-15s %9s\n' crate crates "cold wall" "cold cpu" "rebuild wall" "rebuild cpu" "binary MB"
for name in $only; do
  printf '%-8s %6s  %-18s %-18s %-15s %-15s %9.1f\n' "$name" "$(median "$work/$name.cold" 1)" \
    "$(stats "$work/$name.cold" 2 | tr ' ' /)" "$(stats "$work/$name.cold" 3 | tr ' ' /)" \
    "$(stats "$work/$name.rebuild" 2 | tr ' ' /)" "$(stats "$work/$name.rebuild" 3 | tr ' ' /)" \
    "$(median "$work/$name.cold" 4 | awk '{ print $1 / 1e6 }')"
done

# The ratios of crate $1's medians to crate $2's.
ratio() {
  local figures="" column kind
  for column in "cold 1" "cold 2" "cold 3" "rebuild 2" "rebuild 3" "cold 4"; do
    read -r kind column <<<"$column"
    figures="$figures $(median "$work/$1.$kind" "$column") $(median "$work/$2.$kind" "$column")"
  done
  echo "$figures" | awk -v n="$1/$2" '{ printf "%-16s crates %.2fx, cold wall %.2fx, cold cpu %.2fx, rebuild wall %.2fx, rebuild cpu %.2fx, binary %.2fx\n", n, $1 / $2, $3 / $4, $5 / $6, $7 / $8, $9 / $10, $11 / $12 }'
}
has() { case " $only " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
echo
echo "ratios of the medians"
if has floor; then
  for name in $only; do [ "$name" = floor ] || ratio "$name" floor; done
fi
if has before && has default; then ratio default before; fi
if has before && has minimal; then ratio minimal before; fi
