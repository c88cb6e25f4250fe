#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# tests/fuzz/run.sh - libFuzzer targets for the readers of untrusted input:
# builds them with clang (-fsanitize=fuzzer,address,undefined) against the
# lib/ sources and runs each target in turn.
#
#   tests/fuzz/run.sh [--replay | --explore SECONDS] [--grow-corpus] [TARGET...]
#
# Without options: the check that gates (setup.sh test runs it), the same
# verdict on every machine with the same compiler (clang-14):
#   1. replay: every committed input in tests/fuzz/corpus/fuzz_TARGET/
#      (regression inputs of bugs found before, and a corpus of real data)
#      runs once;
#   2. exploration: libFuzzer with -seed=1 and a fixed number of runs per
#      target (RUNS below), starting from those committed inputs only.
# A crash, leak, hang or sanitizer report found by either fails the run.
# What exploration finds is saved at once as a new regression input,
# tests/fuzz/corpus/fuzz_TARGET/crash-SHA1, with the command that replays
# it: fix the bug and commit the file; every later run replays it.
#
#   --replay           step 1 only: the committed inputs, no exploration
#                      (the quick tier, ./setup.sh quick)
#   --explore SECONDS  after the check, explore each target for SECONDS
#                      more, with a random seed and also from seeds made of
#                      this machine's data (its interpreters, their line
#                      tables and _Py_DebugOffsets, DWARF of CPython's
#                      headers, /proc files). Those differ between machines
#                      and runs, so this never changes the exit status; a
#                      finding is saved as a regression input like above
#                      (and so fails the next check until it is fixed).
#   --grow-corpus      merge this machine's seeds into the committed corpus
#                      (only the inputs that add coverage), to be committed.
#   SECONDS alone      the same as --explore SECONDS (the old usage).
#
# TARGET: e.g. linetable or fuzz_linetable (default: all). One target at a
# time, one core. Environment:
#   FUZZ_BUILD=DIR     build directory (default: build-fuzz in the checkout)
#   CC=clang-14        the compiler (clang-14 if present, else clang)
#   FUZZ_RUNS=N        runs of the fixed exploration, every target (else RUNS)
#   FUZZ_RESEED=1      regenerate this machine's seeds (else only when missing)
#   FUZZ_BUILD_ONLY=1  build (and seed, with --explore/--grow-corpus), do not run
#   FUZZ_ARGS="..."    extra libFuzzer flags for --explore
#
# Needs root for fuzz_proc_maps (a private mount namespace; skipped
# otherwise).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=${FUZZ_BUILD:-$ROOT/build-fuzz}
EXPLORE=0 GROW=0 REPLAY_ONLY=0
want=()
while [ $# -gt 0 ]; do
    case $1 in
    --explore) [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "fuzz: --explore SECONDS" >&2; exit 2; }
               EXPLORE=$2; shift 2 ;;
    --grow-corpus) GROW=1; shift ;;
    --replay) REPLAY_ONLY=1; shift ;;
    -h|--help) sed -n '3,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) if [[ $1 =~ ^[0-9]+$ ]]; then EXPLORE=$1; else want+=("$1"); fi; shift ;;
    esac
done
if [ -z "${CC:-}" ]; then
    if command -v clang-14 >/dev/null; then CC=clang-14; else CC=clang; fi
fi
PYENV_DIR=${PYENV_ROOT:-$HOME/.pyenv}
CHROOTS=${PYBPF_CACHE:-/var/cache/pybpf-tools}/chroots

TARGETS=(linetable py_version debug_offsets elf_image eh_frame dwarf_offsets proc_maps
         core_file py_objects census cfi_unwind proc_net
         py_code code_names py_frames py_threads asyncio report_folded report_svg
         report_speedscope report_pprof bpf_image unwind_table)
# Runs of the fixed exploration: about 5-10 s per target on a 2-vCPU VM
# (the slow ones do real file and /proc I/O per input); the whole fuzz step,
# build included, stays under about 5 minutes.
declare -A RUNS=(
    [linetable]=40000 [py_version]=40000 [debug_offsets]=20000 [elf_image]=20000
    [eh_frame]=3000 [dwarf_offsets]=2000 [proc_maps]=800 [py_code]=30000
    [code_names]=8000 [py_frames]=30000 [py_threads]=8000 [asyncio]=20000 [report_folded]=30000
    [report_svg]=15000 [report_speedscope]=30000 [report_pprof]=6000
    [bpf_image]=20000 [core_file]=5000 [py_objects]=10000 [census]=10000 [cfi_unwind]=5000
    [proc_net]=20000 [unwind_table]=8000
)

say() { printf 'fuzz: %s\n' "$*"; }
die() { printf 'fuzz: ERROR: %s\n' "$*" >&2; exit 1; }

command -v "$CC" >/dev/null || die "no $CC (apt-get install clang-14 libclang-rt-14-dev)"
mkdir -p "$B"/{gen,obj,bin,seeds,corpus,artifacts,logs}

# ---- build --------------------------------------------------------------
INC=(-I "$ROOT/lib" -I "$ROOT" -I "$B/gen" -I "$HERE")
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=all)
CFLAGS=(-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Wall -Wextra
        -Wno-unused-parameter "${INC[@]}")
LIBS=(-Wl,--as-needed -lbcc -ldw -lelf -lprotobuf-c -lz)

# newer than $1? (sources and every header they may include)
stale() {
    local out=$1; shift
    [ -e "$out" ] || return 0
    local f
    for f in "$@" "$ROOT"/lib/*/*.h "$ROOT"/tools/*.h "$ROOT"/bpf_c/*.h "$HERE"/*.h "$ROOT"/offsets/field_specs.def; do
        [ "$f" -nt "$out" ] && return 0
    done
    return 1
}

gen() {
    local tables=("$ROOT"/offsets/cpython-3.*.offsets)
    if stale "$B/gen/offset_tables.c" "${tables[@]}" "$ROOT/bpf_c/embed_text.py"; then
        python3 "$ROOT/bpf_c/embed_text.py" "$B/gen/offset_tables.c" array py_builtin_tables \
            $(printf '%s\n' "${tables[@]}" | sort -V)
    fi
    if stale "$B/gen/profile.pb-c.c" "$ROOT/lib/report/pprof/profile.proto"; then
        command -v protoc-c >/dev/null || die "no protoc-c (apt-get install protobuf-c-compiler)"
        protoc-c --proto_path="$ROOT/lib/report/pprof" --c_out="$B/gen" "$ROOT/lib/report/pprof/profile.proto"
    fi
    [ -e "$B/gen/pybpf_version.h" ] ||
        echo '#define PYBPF_VERSION "fuzz"' > "$B/gen/pybpf_version.h"
}

build() {
    local objs=() src obj t
    gen
    # every lib/ source, instrumented; targets link what they use
    for src in "$ROOT"/lib/*/*.c "$B/gen/offset_tables.c" "$B/gen/profile.pb-c.c"; do
        obj=$B/obj/$(basename "$(dirname "$src")")_$(basename "${src%.c}").o
        if stale "$obj" "$src"; then
            "$CC" "${CFLAGS[@]}" "${SAN[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
        fi
        objs+=("$obj")
    done
    if stale "$B/libpybpf-fuzz.a" "${objs[@]}"; then
        rm -f "$B/libpybpf-fuzz.a"
        ar rcs "$B/libpybpf-fuzz.a" "${objs[@]}"
    fi
    for t in "${TARGETS[@]}"; do
        if stale "$B/bin/fuzz_$t" "$HERE/fuzz_$t.c" "$B/libpybpf-fuzz.a"; then
            "$CC" "${CFLAGS[@]}" "${SAN[@]}" -fsanitize=fuzzer "$HERE/fuzz_$t.c" \
                "$B/libpybpf-fuzz.a" "${LIBS[@]}" -o "$B/bin/fuzz_$t"
        fi
    done
    if stale "$B/bin/seedgen" "$HERE/seedgen.c" "$B/libpybpf-fuzz.a"; then
        "$CC" "${CFLAGS[@]}" "${SAN[@]}" -fsanitize=fuzzer-no-link "$HERE/seedgen.c" \
            "$B/libpybpf-fuzz.a" "${LIBS[@]}" -o "$B/bin/seedgen"
    fi
}

# ---- seeds from real data ------------------------------------------------
# Interpreter ELF files on this machine: Debian's, pyenv's (executable and
# libpython), the test chroots'.
interpreters() {
    local f
    for f in /usr/bin/python3.[0-9]* "$PYENV_DIR"/versions/3.*/bin/python3.[0-9]* \
             "$PYENV_DIR"/versions/3.*/lib/libpython3.*.so.1.0 \
             "$CHROOTS"/*/usr/bin/python3.[0-9]*; do
        [ -f "$f" ] && [ ! -L "$f" ] && head -c4 "$f" 2>/dev/null | grep -q ELF && echo "$f"
    done
}

seed_linetables() {
    local out=$B/seeds/fuzz_linetable f root py tag minor
    for f in /usr/bin/python3.[0-9]* "$PYENV_DIR"/versions/3.*/bin/python3.[0-9]*; do
        [[ $f =~ python3\.([0-9]+)$ ]] || continue
        minor=${BASH_REMATCH[1]}
        [ "$minor" -ge 8 ] || continue
        tag=$(echo "$f" | tr -c 'A-Za-z0-9.\n' _)
        "$f" "$HERE/seed_linetables.py" dump 2>/dev/null |
            python3 "$HERE/seed_linetables.py" write "$out" "$tag" || true
    done
    # the chroots' interpreters (3.9, 3.13 to 3.15), run inside them
    for f in "$CHROOTS"/*/usr/bin/python3.[0-9]*; do
        [[ $f =~ ^(.*)/usr/bin/(python3\.([0-9]+))$ ]] || continue
        root=${BASH_REMATCH[1]} py=${BASH_REMATCH[2]} minor=${BASH_REMATCH[3]}
        [ "$minor" -ge 8 ] && [ "$(id -u)" = 0 ] || continue
        tag=$(basename "$root")_$py
        chroot "$root" "/usr/bin/$py" - dump < "$HERE/seed_linetables.py" 2>/dev/null |
            python3 "$HERE/seed_linetables.py" write "$out" "$tag" || true
    done
}

seed_elf() {
    local out=$B/seeds/fuzz_elf_image f
    mkdir -p "$out"
    for f in $(interpreters); do
        # small ones whole (pyenv's python3.N is a 17 KB launcher of libpython)
        if [ "$(stat -c %s "$f")" -le 65536 ]; then
            cp "$f" "$out/$(echo "$f" | tr / _)"
        else
            python3 "$HERE/elf_distill.py" "$f" "$out/distilled$(echo "$f" | tr / _)" || true
        fi
    done
    for f in "$PYENV_DIR"/versions/3.1*/lib/libpython3.so /usr/bin/true; do
        [ -f "$f" ] && cp "$f" "$out/$(echo "$f" | tr / _)"
    done
    cp "$B"/seeds/fuzz_dwarf_offsets/shapes* "$out/" 2>/dev/null || true
}

# the link address of each interpreter's .eh_frame, then its first 16 KB
seed_eh_frame() {
    local out=$B/seeds/fuzz_eh_frame f addr tmp=$B/seeds/eh_frame.tmp
    mkdir -p "$out"
    for f in $(interpreters); do
        addr=$(readelf -SW "$f" 2>/dev/null |
               sed -n 's/.*\] \.eh_frame  *PROGBITS  *\([0-9a-f]*\) .*/\1/p' | head -1)
        [ -n "$addr" ] || continue
        objcopy -O binary --only-section=.eh_frame "$f" "$tmp" 2>/dev/null || continue
        python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("<Q", int(sys.argv[1], 16)) + open(sys.argv[2], "rb").read(16384))' \
            "$addr" "$tmp" > "$out/$(echo "$f" | tr / _)"
    done
    rm -f "$tmp"
}

seed_dwarf() {
    local out=$B/seeds/fuzz_dwarf_offsets tmp=$B/seeds/tmp inc minor cc v
    mkdir -p "$out" "$tmp"
    # a small file of CPython's shapes, from two compilers, two DWARF versions
    for cc in "$CC" gcc; do
        command -v "$cc" >/dev/null || continue
        for v in 4 5; do
            "$cc" -gdwarf-$v -O0 -fPIC -shared -nostdlib "$HERE/dwarf_shapes.c" \
                -o "$out/shapes-$(basename "$cc")-dwarf$v.so" 2>/dev/null || true
        done
    done
    # the real structs, from each version's own headers (offsets/generate.py's includes)
    for inc in "$PYENV_DIR"/versions/3.*/include/python3.*; do
        [[ $inc =~ python3\.([0-9]+)$ ]] || continue
        minor=${BASH_REMATCH[1]}
        [ "$minor" -ge 8 ] && [ "$minor" -le 12 ] || continue
        python3 - "$inc" "$minor" "$ROOT/offsets/field_specs.def" > "$tmp/cpython-3.$minor.c" <<'EOF'
import os, re, sys
inc, minor, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
print("#define Py_BUILD_CORE 1\n#include <Python.h>")
for h in ("internal/pycore_pystate.h", "internal/pycore_runtime.h", "internal/pycore_interp.h",
          "internal/pycore_gil.h", "internal/pycore_frame.h", "frameobject.h"):
    if os.path.exists(os.path.join(inc, h)):
        print("#include <%s>" % h)
types = []
for line in open(specs):
    m = re.match(r"^PY_(?:FIELD|SIZE)\(\w+,\s*(\d+),\s*(\d+),\s*([^,)]+?)\s*[,)]", line.strip())
    if m and int(m.group(1)) <= minor <= int(m.group(2)) and m.group(3) not in types:
        types.append(m.group(3))
for i, t in enumerate(types):
    print("%s fuzz_seed_%d;" % (t, i))
EOF
        gcc -g -O0 -fPIC -shared -nostdlib -w -I "$inc" "$tmp/cpython-3.$minor.c" \
            -o "$out/cpython-3.$minor.so" 2>/dev/null || say "no DWARF seed from $inc"
    done
    rm -rf "$tmp"
}

seed_proc() {
    local out=$B/seeds/fuzz_proc_maps
    mkdir -p "$out"
    # a real Python process and a shell: their own maps, status, comm, stat, schedstat
    python3 - "$out" <<'EOF'
import sys
out = sys.argv[1]
def snap(pid):
    return b"\0|\0".join(open("/proc/%s/%s" % (pid, n), "rb").read()
                         for n in ("maps", "status", "comm", "stat", "schedstat"))
open(out + "/python", "wb").write(snap("self"))
# a thread name cut inside a UTF-8 character, a comm with ") Z" in it
s = snap("self").split(b"\0|\0")
open(out + "/utf8-comm", "wb").write(b"\0|\0".join([s[0], s[1], "wörker-thread-ü".encode()[:15] + b"\n",
                                                  b"42 (a) Z (b) R 1 2 3\n", s[4]]))
EOF
    cat /proc/self/maps > "$out/shell-maps"
}

seed_small() {
    # py_version: PY_VERSION_HEX + version strings and file names
    python3 - "$B/seeds/fuzz_py_version" <<'EOF'
import os, struct, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
cases = [(0x030b02f0, "3.11.2"), (0x030f00a1, "3.15.0a1+"), (0x030d00c1, "3.13.0rc1"),
         (0x030e06f0, "python3.14"), (0x030d00f0, "python3.13t"),
         (0x030b07f0, "libpython3.11.so.1.0"), (0x030800f0, "python3.8d-config"),
         (0x02070ff0, "2.7.18"), (0x030c01f0, "3.12.1 (main, Jan  1 2024, 00:00:00) [GCC 12.2.0]")]
for i, (h, s) in enumerate(cases):
    open("%s/%02d" % (out, i), "wb").write(struct.pack("<I", h) + s.encode())
EOF
    # report writers: rows of real-looking and hostile names (fuzz_rows.h)
    python3 - "$B/seeds" <<'EOF'
import os, struct, sys
def row(comm, pid, nkernel, value, frames, runnable=False):
    c = comm.encode() if isinstance(comm, str) else comm
    flags = len(c[:15]) | (16 if runnable else 0)
    return (bytes([flags]) + c[:15] + bytes([pid, nkernel]) + struct.pack("<H", value)
            + b";".join(frames) + b"\n")
def text(s):
    return s.encode("utf-8", "surrogateescape").replace(b";", b"\x01").replace(b"\n", b"\x02")
def py(name, path=None, line=-1):  # first byte: kind 0 (mod 3) and line + 1 (>> 2)
    b0 = next(b for b in range(4 * (line + 1), 4 * (line + 1) + 4) if b % 3 == 0)
    return bytes([b0]) + text(name) + (b"@" + text(path) if path is not None else b"")
def native(name, lib=True):
    return bytes([1 + 3 * 8 if lib else 1]) + text(name)  # 25: bit 2 set, a file
def marker(s):
    return b"\x02" + text(s)
def kernel(name):
    return b"\x05" + text(name)
demo = "/srv/examples/demo/demo_workload.py"
rows = [
    row("python3", 0, 0, 59, [py("<module>", demo, 60), py("main", demo, 54),
                              py("parse_records", demo, 43)]),
    row("python3", 0, 2, 18, [py("<module>", demo, 60), native("_PyEval_EvalFrameDefault"),
                              kernel("entry_SYSCALL_64"), kernel("do_syscall_64")]),
    row("w\xf6rker-thread-\xfc".encode()[:15], 1, 1, 7,
        [py("run", "/srv/app.py", 1), native(""), kernel("schedule")], runnable=True),
    row("a;b\nc", 2, 0, 1, [py("<lambda>", "<string>", 1), py("x<y>&\"'z", "/t/\u00e9.py"),
                             py("a;b\nc", "/x;y\n.py", 3)]),
    row("python3.14", 3, 0, 65535, [marker("[no Python frames]")]),
    row("", 3, 0, 2, [py("[unknown code 0x7f00]"), marker("\x01\x7f\x1b[31mred"),
                      marker(""), native("", lib=False), kernel("")]),
]
for t in ("report_folded", "report_svg", "report_speedscope", "report_pprof"):
    out = os.path.join(sys.argv[1], "fuzz_" + t)
    os.makedirs(out, exist_ok=True)
    for i, r in enumerate(rows):
        open("%s/row%d" % (out, i), "wb").write(r)
    open("%s/all" % out, "wb").write(b"".join(rows))
EOF
}

# pydump's readers: a tiny core (headers, notes of every kind, a segment),
# unwind tables with a stack behind them, this machine's socket tables
seed_pydump() {
    local out=$B/seeds d f
    mkdir -p "$out/fuzz_core_file" "$out/fuzz_cfi_unwind" "$out/fuzz_proc_net"
    python3 "$HERE/seed_pydump.py" core "$out/fuzz_core_file/tiny"
    for f in "$out"/fuzz_eh_frame/*; do
        [ -f "$f" ] && python3 "$HERE/seed_pydump.py" cfi "$f" "$out/fuzz_cfi_unwind/$(basename "$f")"
    done
    for d in tcp tcp6 udp unix; do
        [ -r "/proc/net/$d" ] && python3 "$HERE/seed_pydump.py" net "/proc/net/$d" "$out/fuzz_proc_net/$d"
    done
}

# compiled BPF images: the entries of a warm cache, without their key
seed_bpf_images() {
    local out=$B/seeds/fuzz_bpf_image f
    mkdir -p "$out"
    for f in "${PYBPF_BPF_CACHE:-/var/cache/pybpf-tools/bpf}"/*.img; do
        [ -r "$f" ] || continue
        python3 - "$f" "$out/$(basename "$f")" <<'PYEOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
klen = struct.unpack("<I", data[:4])[0]
open(sys.argv[2], "wb").write(data[4 + klen:])
PYEOF
    done
}

seed() {
    local interps
    mapfile -t interps < <(interpreters)
    say "seeds from ${#interps[@]} interpreter binaries and their line tables"
    rm -rf "$B/seeds"
    mkdir -p "$B/seeds"
    seed_linetables
    "$B/bin/seedgen" debug-offsets "$B/seeds/fuzz_debug_offsets" "${interps[@]}"
    "$B/bin/seedgen" mem "$B/seeds" "$B/seeds/fuzz_linetable" \
        "$B"/seeds/fuzz_debug_offsets/*
    seed_dwarf
    seed_elf
    seed_eh_frame
    seed_proc
    seed_small
    seed_pydump
    seed_bpf_images
    # asyncio: the same images as py_frames (header.root a thread state)
    rm -rf "$B/seeds/fuzz_asyncio"
    cp -r "$B/seeds/fuzz_py_frames" "$B/seeds/fuzz_asyncio" 2>/dev/null ||
        mkdir -p "$B/seeds/fuzz_asyncio"
    # unwind_table: the same sections as eh_frame
    rm -rf "$B/seeds/fuzz_unwind_table"
    cp -r "$B/seeds/fuzz_eh_frame" "$B/seeds/fuzz_unwind_table" 2>/dev/null ||
        mkdir -p "$B/seeds/fuzz_unwind_table"
    touch "$B/seeds/.done"
}

# ---- run ----------------------------------------------------------------
san_env() {
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-} \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-} "$@"
}

show_report() {
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*fuzz check failed)' "$1" |
        head -6 | sed 's/^/    /' >&2 || true
}

# The committed inputs of target $1, replayed one by one (a failure names
# the file). Returns non-zero on the first that fails.
replay() {
    local t=fuzz_$1 log=$B/logs/fuzz_$1.replay.log f bad
    local files=()
    if [ -d "$HERE/corpus/$t" ]; then
        for f in "$HERE/corpus/$t"/*; do [ -f "$f" ] && files+=("$f"); done
    fi
    [ ${#files[@]} -gt 0 ] || { say "$t: no committed inputs to replay"; return 0; }
    if san_env "$B/bin/$t" -timeout=25 -rss_limit_mb=2048 "${files[@]}" > "$log" 2>&1; then
        say "$t: replayed ${#files[@]} committed inputs"
        return 0
    fi
    bad=$(sed -n 's/^Running: //p' "$log" | tail -1)
    say "$t: FAILED replaying ${bad#"$ROOT"/} (log $log)"
    show_report "$log"
    say "$t: replay: $B/bin/$t ${bad:-$HERE/corpus/$t}"
    return 1
}

# A finding of exploration becomes a regression input in the checkout.
keep_finding() {
    local t=$1 log=$2 how=$3 art name dest
    art=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    if [ -z "$art" ] || [ ! -f "$art" ]; then
        say "$t: FAILED ($how) without a reproducer; log $log"
        show_report "$log"
        return
    fi
    name=$(basename "$art")
    dest=$HERE/corpus/$t/$name
    mkdir -p "$HERE/corpus/$t"
    cp "$art" "$dest"
    say "$t: FOUND a bug ($how); log $log"
    show_report "$log"
    say "$t: saved as the regression input ${dest#"$ROOT"/}"
    say "$t:   replay it: $B/bin/$t $dest"
    say "$t:   fix the bug and commit the file: every run replays it"
}

# -seed=1, a fixed number of runs, from the committed inputs only. To run
# alike on every machine, nothing that differs between machines may steer
# it: the inputs are named in sorted order (-seed_inputs; a directory would
# be read in its file system's order), new ones go to a scratch directory
# emptied first, addresses are not randomized (setarch -R: compared
# pointers feed libFuzzer's mutations), and it runs from the build
# directory with relative paths and a fixed environment.
explore_fixed() {
    local t=fuzz_$1 log=$B/logs/fuzz_$1.log runs=${FUZZ_RUNS:-${RUNS[$1]:-5000}} rc=0 ft f
    local seeds=()
    rm -rf "$B/work/$t" "$B/work/$t.seeds"
    mkdir -p "$B/work/$t" "$B/artifacts/$t"
    ln -sfn "$HERE/corpus" "$B/committed"
    if [ -d "$HERE/corpus/$t" ]; then
        for f in "$HERE/corpus/$t"/*; do [ -f "$f" ] && echo "committed/$t/$(basename "$f")"; done |
            LC_ALL=C sort | paste -sd, - > "$B/work/$t.seeds"
    fi
    [ -s "$B/work/$t.seeds" ] && seeds=(-seed_inputs=@"work/$t.seeds")
    (cd "$B" && env -i PATH=/usr/bin:/bin \
        ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        setarch -R "bin/$t" -seed=1 -runs="$runs" -reload=0 -timeout=25 -rss_limit_mb=2048 \
        -artifact_prefix="artifacts/$t/" -print_final_stats=1 \
        "${seeds[@]}" "work/$t") > "$log" 2>&1 || rc=$?
    if [ "$rc" != 0 ]; then
        sed -i "s|Test unit written to artifacts/|Test unit written to $B/artifacts/|" "$log"
        keep_finding "$t" "$log" "-seed=1 -runs=$runs"
        return 1
    fi
    ft=$(grep -E '^#[0-9]+.*DONE' "$log" | tail -1 | grep -o 'cov: [0-9]* ft: [0-9]*' || true)
    say "$t: ok, $runs runs from -seed=1 (${ft:-cov: ?}, $(ls "$B/work/$t" | wc -l) new inputs)"
}

# --explore: time-based, random seed, this machine's seeds too. Never gates.
explore_timed() {
    local t=fuzz_$1 log=$B/logs/fuzz_$1.explore.log corpus=$B/corpus/fuzz_$1 rc=0 execs
    local dirs=("$corpus")
    mkdir -p "$corpus" "$B/artifacts/$t"
    [ -d "$B/seeds/$t" ] && dirs+=("$B/seeds/$t")
    [ -d "$HERE/corpus/$t" ] && dirs+=("$HERE/corpus/$t")
    # shellcheck disable=SC2086
    san_env "$B/bin/$t" -max_total_time="$EXPLORE" -timeout=25 -rss_limit_mb=2048 \
        -artifact_prefix="$B/artifacts/$t/" -print_final_stats=1 ${FUZZ_ARGS:-} \
        "${dirs[@]}" > "$log" 2>&1 || rc=$?
    if [ "$rc" != 0 ]; then
        keep_finding "$t" "$log" "--explore $EXPLORE"
        return 1
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    say "$t: explored ${EXPLORE}s, ${execs:-?} runs, corpus $(ls "$corpus" | wc -l)"
}

# --grow-corpus: the inputs of this machine's seeds that add coverage.
grow() {
    local t=fuzz_$1 before after
    [ -d "$B/seeds/$t" ] || return 0
    mkdir -p "$HERE/corpus/$t"
    before=$(ls "$HERE/corpus/$t" | wc -l)
    san_env "$B/bin/$t" -merge=1 -timeout=25 -rss_limit_mb=2048 "$HERE/corpus/$t" \
        "$B/seeds/$t" > "$B/logs/$t.merge.log" 2>&1 || { say "$t: merge failed (log $B/logs/$t.merge.log)"; return 1; }
    after=$(ls "$HERE/corpus/$t" | wc -l)
    say "$t: $((after - before)) inputs added to tests/fuzz/corpus/$t"
}

build
mkdir -p "$B/work"
if [ "$EXPLORE" != 0 ] || [ "$GROW" = 1 ]; then
    if [ ! -e "$B/seeds/.done" ] || [ "${FUZZ_RESEED:-0}" = 1 ]; then seed; fi
fi
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && { say "built in $B/bin"; exit 0; }

[ ${#want[@]} -gt 0 ] || want=("${TARGETS[@]}")
for i in "${!want[@]}"; do
    want[$i]=${want[$i]#fuzz_}
    [[ " ${TARGETS[*]} " == *" ${want[$i]} "* ]] || die "no target ${want[$i]} (targets: ${TARGETS[*]})"
done
if [ "$GROW" = 1 ]; then
    for t in "${want[@]}"; do grow "$t" || true; done
    exit 0
fi
failed=0 found=0
for t in "${want[@]}"; do
    if [ "$t" = proc_maps ] && [ "$(id -u)" != 0 ]; then
        say "fuzz_$t: skipped (needs root for a private mount namespace)"
        continue
    fi
    if replay "$t"; then
        [ "$REPLAY_ONLY" = 1 ] || explore_fixed "$t" || failed=$((failed + 1))
    else
        failed=$((failed + 1))
    fi
done
if [ "$EXPLORE" != 0 ]; then
    for t in "${want[@]}"; do
        [ "$t" = proc_maps ] && [ "$(id -u)" != 0 ] && continue
        explore_timed "$t" || found=$((found + 1))
    done
    [ "$found" = 0 ] || say "--explore found $found new regression input(s): see above (not counted in the exit status)"
fi
if [ "$failed" != 0 ]; then
    say "$failed target(s) FAILED"
    exit 1
fi
if [ "$REPLAY_ONLY" = 1 ]; then
    say "all ${#want[@]} targets passed (committed inputs replayed)"
else
    say "all ${#want[@]} targets passed (committed inputs replayed, fixed exploration)"
fi
