#!/usr/bin/env bash
# setup.sh - one entry point to prepare a fresh Debian/Ubuntu machine for
# pybpf-tools, build it, create the Python test chroots and run the tests.
#
#   ./setup.sh [deps|headers|tracefs|build|chroots|austin|demo|quick|test|all] ...
#
# Subcommands run in the order given; no argument = "deps headers tracefs
# build".  Every step is idempotent and cheap when there is nothing to do.
# "quick" (the quick test tier) needs neither root, BPF, chroots nor libbcc.
#
# Environment:
#   MESON_ARGS    extra arguments for "meson setup" (e.g. -Dwerror=true)
#   PYBPF_CACHE   cache directory (default /var/cache/pybpf-tools); the test
#                 chroots live in $PYBPF_CACHE/chroots/{bullseye,sid}
#   MIRROR        the Debian mirror debootstrap fetches the chroots from
#                 (default: the one this machine's apt uses for a Debian
#                 suite, else http://deb.debian.org/debian)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILDDIR=build
CACHE=${PYBPF_CACHE:-/var/cache/pybpf-tools}
CHROOTS=$CACHE/chroots
DEFAULT_MIRROR=http://deb.debian.org/debian
HOST_PY=/usr/bin/python3     # Debian's python, never a pyenv/venv shim
DEPS=(libbpfcc-dev bpfcc-tools meson ninja-build pkgconf gcc libelf-dev
      libdw-dev libprotobuf-c-dev protobuf-c-compiler zlib1g-dev debootstrap python3
      python3-pytest python3-pytest-xdist cppcheck util-linux)
# go tool pprof reads our pprof files; clang with its libFuzzer runtime builds
# tests/fuzz; the Debian package test needs the packaging tools and git;
# tests/test_outputs.py checks speedscope files against the schema npm's
# speedscope package carries (python3-jsonschema) and renders the flame
# graph in headless Chromium; tests/unit/test_native_symbols.c names a static
# libc function through libc6-dbg's debug file (11 MB) and asks a local
# debuginfod server (0.3 MB); tests/test_native.py compares native stacks
# with perf's DWARF unwinder (linux-perf)
TEST_DEPS=(golang-go clang-14 libclang-rt-14-dev build-essential dpkg-dev debhelper
           lintian git python3-jsonschema npm chromium libc6-dbg debuginfod linux-perf)
SID_PYTHONS=(3.13 3.14 3.15)  # the sid chroot gets each one sid has

# The first mirror this machine's apt takes a Debian suite from (one-line
# sources.list files and deb822 .sources files), so that a machine behind its
# own mirror or proxy builds the chroots from it too. A suite counts if it is
# Debian's own (a codename or stable/testing/unstable): an Ubuntu or
# third-party archive cannot debootstrap bullseye or sid, nor can
# -security/-updates. Prints nothing if there is none.
apt_debian_mirror() {
    local suites=" sid stable testing unstable oldstable oldoldstable buster bullseye bookworm trixie forky duke "
    local files=() f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && files+=("$f")
    done
    [ ${#files[@]} -gt 0 ] || return 0
    awk -v suites="$suites" '
        function debian(s) { return index(suites, " " s " ") > 0 }
        function web(u) { return u ~ /^(https?|ftp):\/\// }
        function found(u) { print u; done = 1; exit }
        function flush(   i, n, us, ss, ok) {
            if (!done && types ~ /(^| )deb( |$)/ && enabled != "no") {
                n = split(suites822, ss, " ")
                for (i = 1; i <= n; i++) if (debian(ss[i])) ok = 1
                n = split(uris, us, " ")
                for (i = 1; ok && i <= n; i++) if (web(us[i])) found(us[i])
            }
            types = uris = suites822 = enabled = ""
        }
        FILENAME ~ /\.sources$/ {
            if (FNR == 1) flush()
            if ($0 ~ /^[ \t]*$/) { flush(); next }
            if ($0 ~ /^#/) next
            key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "")
            if (key == "types") types = $0
            else if (key == "uris") uris = $0
            else if (key == "suites") suites822 = $0
            else if (key == "enabled") enabled = tolower($0)
            next
        }
        $1 == "deb" {
            i = 2
            if ($i ~ /^\[/) while (i <= NF && $i !~ /\]$/) i++
            if ($i ~ /^\[/ || $i ~ /\]$/) i++
            if (web($i) && debian($(i + 1))) found($i)
        }
        END { flush() }
    ' "${files[@]}" | sed 's:/*$::' | head -n 1
}
MIRROR=${MIRROR:-$(apt_debian_mirror)}
MIRROR=${MIRROR:-$DEFAULT_MIRROR}

# Same tool lookup whether started as root or via sudo (secure_path): system
# directories first so pyenv shims etc. in a root PATH do not take over.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export DEBIAN_FRONTEND=noninteractive
export PYBPF_CACHE=$CACHE

say()  { printf 'setup: %s\n' "$*"; }
warn() { printf 'setup: WARNING: %s\n' "$*" >&2; }
die()  { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

usage() {
    cat <<EOF
usage: $0 [deps|headers|tracefs|build|chroots|austin|demo|quick|test|all] ...
  deps     install missing Debian packages (apt-get only if something is missing)
  headers  make kernel headers for $(uname -r) visible to libbcc
  tracefs  mount tracefs (and debugfs) if needed
  build    meson setup (first time) + meson compile in ./$BUILDDIR
  chroots  create Python test chroots in $CHROOTS
  austin   unpack Debian's austin into the sid chroot (for bench/peer_austin.py)
  demo     run the demo workload and inspect it with build/tools/pydump
  quick    the quick test tier, as any user, without BPF, chroots or libbcc
           (a few minutes): build, unit tests (parsers, report writers, every
           table row of every supported CPython), layer check, cppcheck, the
           docs against the tools, fuzz replay of the committed inputs
  test     deps headers tracefs build chroots, then every test (CI's; root)
  all      deps headers tracefs build chroots
no argument = deps headers tracefs build
EOF
}

# ----------------------------------------------------------------- apt --
APT_UPDATED=0
apt_get() {
    apt-get -q -y -o DPkg::Lock::Timeout=300 "$@"
}
apt_update_once() {
    if [ "$APT_UPDATED" = 0 ]; then
        say "apt-get update"
        apt_get update
        APT_UPDATED=1
    fi
}
pkg_installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}
# true if apt knows an installable version (candidate) of package $1
pkg_available() {
    local cand
    cand=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
    [ -n "$cand" ] && [ "$cand" != "(none)" ]
}
# install those of the given packages that are not installed yet
# Packages that also count as there when their command is: NodeSource's
# nodejs carries its own npm and conflicts with Debian's npm package.
declare -A PKG_COMMAND=([npm]=npm)
apt_install_missing() {
    local p missing=()
    for p in "$@"; do
        pkg_installed "$p" && continue
        [ -n "${PKG_COMMAND[$p]:-}" ] && command -v "${PKG_COMMAND[$p]}" >/dev/null && continue
        missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    apt_update_once
    say "installing: ${missing[*]}"
    apt_get install "${missing[@]}"
}

# ------------------------------------------------------------- headers --
KREL=$(uname -r)
MODDIR=/lib/modules/$KREL

have_kernel_headers() {
    [ -e "$MODDIR/build/include/linux/kconfig.h" ] ||
    [ -e "$MODDIR/source/include/linux/kconfig.h" ] ||
    [ -e /sys/kernel/kheaders.tar.xz ]
}

# Set HEADERS_PKG to the headers package needed for the running kernel
# (empty if headers are already usable).  May run apt-get update (once).
HEADERS_PKG=
find_headers_package() {
    HEADERS_PKG=
    have_kernel_headers && return 0
    local arch p
    arch=$(dpkg --print-architecture)
    for p in "linux-headers-$KREL" "linux-headers-$arch" linux-headers-generic; do
        if pkg_installed "$p"; then HEADERS_PKG=$p; return 0; fi
    done
    apt_update_once
    for p in "linux-headers-$KREL" "linux-headers-$arch" linux-headers-generic; do
        if pkg_available "$p"; then HEADERS_PKG=$p; return 0; fi
    done
    warn "no kernel headers package found for $KREL ($arch)"
}

# symlink $1 -> $2 unless $1 is something that is not ours
link_headers() {
    local link=$1 target=$2 cur
    if [ -L "$link" ]; then
        cur=$(readlink "$link")
        if [ "$cur" = "$target" ]; then
            say "headers: $link -> $target (already)"
            return 0
        fi
        # ours = points into /usr/src/linux-headers-*; dangling = broken
        if [[ "$cur" != /usr/src/linux-headers-* ]] && [ -e "$link" ]; then
            warn "$link -> $cur is not ours, leaving it alone"
            return 0
        fi
        ln -sfn "$target" "$link"
    elif [ -e "$link" ]; then
        warn "$link exists and is not a symlink, leaving it alone"
        return 0
    else
        ln -s "$target" "$link"
    fi
    say "headers: mapped $link -> $target"
}

do_headers() {
    if [ -e "$MODDIR/build/include/linux/kconfig.h" ] ||
       [ -e "$MODDIR/source/include/linux/kconfig.h" ]; then
        say "headers: kernel headers for $KREL present"
        return 0
    fi
    if [ -e /sys/kernel/kheaders.tar.xz ]; then
        say "headers: using /sys/kernel/kheaders.tar.xz"
        return 0
    fi
    find_headers_package
    local pkg=$HEADERS_PKG
    [ -n "$pkg" ] || die "cannot provide kernel headers for $KREL"
    apt_install_missing "$pkg"
    if have_kernel_headers; then      # exact linux-headers-$KREL did it
        say "headers: installed $pkg"
        return 0
    fi
    # Headers of another (distro) kernel: map the newest installed tree.
    local arch flavour tree base common
    arch=$(dpkg --print-architecture)
    flavour=$arch
    [ "$pkg" = linux-headers-generic ] && flavour=generic
    tree=$(printf '%s\n' /usr/src/linux-headers-*-"$flavour" | sort -V | tail -n 1)
    if [ ! -d "$tree" ]; then
        die "no /usr/src/linux-headers-*-$flavour tree after installing $pkg"
    fi
    base=${tree%-"$flavour"}
    if [ -d "$base-common" ]; then common=$base-common   # Debian
    elif [ -d "$base" ]; then common=$base               # Ubuntu
    else die "no common headers tree for $tree"
    fi
    mkdir -p "$MODDIR"
    link_headers "$MODDIR/build" "$tree"
    link_headers "$MODDIR/source" "$common"
    have_kernel_headers ||
        warn "headers: still no include/linux/kconfig.h under $MODDIR"
}

do_deps() {
    find_headers_package
    apt_install_missing "${DEPS[@]}" ${HEADERS_PKG:+"$HEADERS_PKG"}
    say "deps: ok"
}

# ------------------------------------------------------------- tracefs --
do_tracefs() {
    if [ -d /sys/kernel/tracing/events ]; then
        say "tracefs: mounted"
    else
        say "tracefs: mounting /sys/kernel/tracing"
        mount -t tracefs tracefs /sys/kernel/tracing
    fi
    if mountpoint -q /sys/kernel/debug ||
       [ -n "$(ls -A /sys/kernel/debug 2>/dev/null)" ]; then
        say "debugfs: mounted"
    elif mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null; then
        say "debugfs: mounted /sys/kernel/debug"
    else
        say "debugfs: cannot mount /sys/kernel/debug (not needed with tracefs)"
    fi
}

# --------------------------------------------------------------- build --
do_build() {
    local args=()
    read -r -a args <<<"${MESON_ARGS:-}"
    if [ ! -e "$BUILDDIR/meson-private/coredata.dat" ]; then
        say "build: meson setup $BUILDDIR ${args[*]}"
        meson setup "$BUILDDIR" "${args[@]}"
    elif [ ${#args[@]} -gt 0 ]; then
        # already configured: still apply explicit options (e.g. CI werror)
        say "build: meson setup --reconfigure $BUILDDIR ${args[*]}"
        meson setup --reconfigure "$BUILDDIR" "${args[@]}"
    fi
    say "build: meson compile -C $BUILDDIR"
    meson compile -C "$BUILDDIR"
}

# ------------------------------------------------------------- chroots --
# unmount everything mounted at or below $1 (deepest first)
umount_below() {
    local dir m
    dir=$(realpath -m "$1")
    awk '{print $2}' /proc/self/mounts | sed 's/\\040/ /g' |
        { grep -E "^${dir}(/|\$)" || true; } | sort -r | while read -r m; do
            umount -R "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
        done
}

# python binaries present and runnable in chroot $1 (one path per line)
list_pythons() {
    local dir=$1 p
    for p in "$dir"/usr/bin/python3.[0-9]*; do
        [[ "$p" =~ /python3\.[0-9]+$ ]] || continue
        [ -x "$p" ] || continue
        chroot "$dir" "${p#"$dir"}" -c 'import sys' 2>/dev/null &&
            echo "${p#"$dir"}"
    done
}

# chroot_build NAME SUITE INCLUDE  (runs in a subshell; 0 = ready)
chroot_build() {
    local name=$1 suite=$2 include=$3
    local dir=$CHROOTS/$name tmp=$CHROOTS/$name.tmp log=$CHROOTS/$name.log
    local t0=$SECONDS v
    if [ -e "$dir/.pybpf-ready" ]; then
        say "chroot $name: ready ($(paste -sd' ' "$dir/.pybpf-ready"))"
        return 0
    fi
    # This runs as a background subshell: make Ctrl-C stop it (bash ignores
    # SIGINT in background jobs by default) and never leave mounts behind.
    trap 'exit 130' INT TERM
    trap 'umount_below "$tmp"' EXIT
    umount_below "$tmp"
    rm -rf --one-file-system "$tmp"
    say "chroot $name: debootstrap $suite from $MIRROR (log: $log)"
    if ! debootstrap --variant=minbase --include="$include" \
            "$suite" "$tmp" "$MIRROR" >"$log" 2>&1; then
        warn "cannot create chroot $name: debootstrap failed: $(tail -n 1 "$log")"
        umount_below "$tmp"
        return 1
    fi
    if [ "$name" = sid ]; then
        local extra=()
        # Test chroot only: tolerate a mirror whose Release file has passed
        # Valid-Until (seen with stale mirrors / skewed clocks).
        echo 'Acquire::Check-Valid-Until "false";' \
            >"$tmp/etc/apt/apt.conf.d/99pybpf-no-valid-until"
        mount -t proc proc "$tmp/proc" ||
            { warn "cannot create chroot $name: mounting proc failed"; return 1; }
        if ! chroot "$tmp" apt-get -q update >>"$log" 2>&1; then
            warn "cannot create chroot $name: apt-get update failed: $(tail -n 1 "$log")"
            return 1
        fi
        for v in "${SID_PYTHONS[@]}"; do
            [ "python$v" = "$include" ] && continue
            local cand
            cand=$(chroot "$tmp" apt-cache policy "python$v" 2>/dev/null |
                   sed -n 's/^ *Candidate: *//p')
            if [ -n "$cand" ] && [ "$cand" != "(none)" ]; then
                extra+=("python$v")
            else
                say "chroot $name: sid has no python$v"
            fi
        done
        if [ ${#extra[@]} -gt 0 ]; then
            say "chroot $name: installing ${extra[*]}"
            if ! chroot "$tmp" env DEBIAN_FRONTEND=noninteractive \
                    apt-get -q -y install "${extra[@]}" >>"$log" 2>&1; then
                warn "cannot create chroot $name: installing ${extra[*]} failed: $(tail -n 1 "$log")"
                return 1
            fi
        fi
        chroot "$tmp" apt-get clean >/dev/null 2>&1 || true
        umount_below "$tmp"
    fi
    list_pythons "$tmp" >"$tmp/.pybpf-ready"
    if [ ! -s "$tmp/.pybpf-ready" ]; then
        rm -f "$tmp/.pybpf-ready"
        warn "cannot create chroot $name: no working python in it"
        return 1
    fi
    umount_below "$dir"
    rm -rf --one-file-system "$dir"
    mv "$tmp" "$dir"
    say "chroot $name: ready in $((SECONDS - t0))s ($(paste -sd' ' "$dir/.pybpf-ready"))"
}

CHROOT_PIDS=()
chroots_interrupted() {
    trap - INT TERM
    say "chroots: interrupted, stopping builds (unfinished chroots stay *.tmp)"
    kill -TERM "${CHROOT_PIDS[@]}" 2>/dev/null || true
    wait "${CHROOT_PIDS[@]}" 2>/dev/null || true
    exit 130
}

do_chroots() {
    mkdir -p "$CHROOTS"
    exec 9>"$CHROOTS/.lock"
    if ! flock -n 9; then
        say "chroots: another setup.sh is building chroots, waiting"
        flock 9
    fi
    # A debootstrap started by hand (into our cache) would race with us.
    local waited=0
    while pgrep debootstrap >/dev/null; do
        if [ $((waited % 60)) = 0 ]; then
            say "chroots: waiting for running debootstrap (pid $(pgrep debootstrap | tr '\n' ' '))"
        fi
        sleep 5; waited=$((waited + 5))
    done
    local t0=$SECONDS rc=0
    CHROOT_PIDS=()
    trap 'chroots_interrupted' INT TERM
    chroot_build bullseye bullseye python3.9 & CHROOT_PIDS+=($!)
    chroot_build sid sid python3.14 & CHROOT_PIDS+=($!)
    wait "${CHROOT_PIDS[0]}" || rc=1
    wait "${CHROOT_PIDS[1]}" || rc=1
    trap - INT TERM
    CHROOT_PIDS=()
    exec 9>&-
    if [ $rc = 0 ]; then
        say "chroots: done in $((SECONDS - t0))s"
    else
        say "chroots: done in $((SECONDS - t0))s, some missing (tests will skip those Python versions)"
    fi
}

# -------------------------------------------------------------- austin --
# The peer of bench/peer_austin.py. Its sid package cannot be installed
# while sid's python3 is 3.14 (it depends on python3 < 3.14, for scripts
# the benchmark does not use), so the .deb and its libraries are unpacked
# into /opt/austin/root of the chroot.
do_austin() {
    local root=$CHROOTS/sid dir=$CHROOTS/sid/opt/austin
    [ -x "$root/usr/bin/python3.14" ] || do_chroots
    if [ -x "$dir/root/usr/bin/austin" ]; then
        say "austin: present ($("$dir/root/usr/bin/austin" --version 2>/dev/null || echo "in $dir"))"
        return 0
    fi
    mkdir -p "$dir"
    chroot "$root" sh -c 'apt-get update -qq && cd /opt/austin &&
        apt-get download -q austin libsframe3 libunwind8' >/dev/null ||
        die "austin: apt-get download in the sid chroot failed"
    for deb in "$dir"/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
    say "austin: unpacked into $dir/root"
}

# ---------------------------------------------------------------- demo --
DEMO_PID=
demo_cleanup() {
    if [ -n "$DEMO_PID" ]; then
        kill "$DEMO_PID" 2>/dev/null || true
        wait "$DEMO_PID" 2>/dev/null || true
        DEMO_PID=
    fi
}

run_demo() {
    # The main job: profile the bundled demo workload for a few seconds and
    # write an interactive flame graph (flamegraph.svg) plus folded stacks.
    local workload=examples/demo/demo_workload.py tool=$BUILDDIR/tools/pyprofile
    [ -f "$workload" ] || die "demo: $workload not found"
    [ -x "$tool" ] || die "demo: $tool not built (run: $0 build)"
    trap demo_cleanup EXIT
    "$HOST_PY" "$workload" &
    DEMO_PID=$!
    say "demo: workload pid $DEMO_PID"
    sleep 1
    local rc=0
    say "demo: $tool -F 99 -p $DEMO_PID -o flamegraph.svg --format svg 5"
    "$tool" -F 99 -p "$DEMO_PID" -o flamegraph.svg --format svg 5 || rc=$?
    [ $rc = 0 ] || { demo_cleanup; trap - EXIT; die "demo: $tool exited with $rc"; }
    say "demo: $BUILDDIR/tools/pydump -p $DEMO_PID"
    "$BUILDDIR/tools/pydump" -p "$DEMO_PID" || rc=$?
    demo_cleanup
    trap - EXIT
    [ $rc = 0 ] || die "demo: pydump exited with $rc"
    say "demo: wrote $(pwd)/flamegraph.svg ($(wc -c < flamegraph.svg) bytes): open it in a browser"
}

# ---------------------------------------------------------------- test --
do_test() {
    do_deps; do_headers; do_tracefs; do_build; do_chroots
    apt_install_missing "${TEST_DEPS[@]}"
    local rc=0 prc=0
    say "test: meson test -C $BUILDDIR"
    meson test -C "$BUILDDIR" --print-errorlogs || rc=1
    say "test: cppcheck lib tools tests/unit"
    cppcheck -q --enable=warning,performance,portability --error-exitcode=1 \
        --inline-suppr -D__x86_64__ -I lib -I . -I tools -I "$BUILDDIR" lib tools tests/unit || rc=1
    # The readers parse untrusted memory and binaries: run them under
    # AddressSanitizer and UndefinedBehaviorSanitizer too (unit tests, and
    # pydump against every interpreter, garbled memory included).
    local asan=${BUILDDIR}-asan
    if [ ! -e "$asan/meson-private/coredata.dat" ]; then
        meson setup "$asan" -Db_sanitize=address,undefined -Db_lundef=false \
            -Dbuildtype=debug || rc=1
    fi
    say "test: sanitizer build ($asan)"
    meson compile -C "$asan" pydump test_units test_objects test_unwind_table \
        test_native_symbols || rc=1
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$asan/tests/test_units" || rc=1
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$asan/tests/test_objects" || rc=1
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$asan/tests/test_native_symbols" || rc=1
    # (every 10th pc or so of each file: the normal build's meson test has all)
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$asan/tests/test_unwind_table" 300000 \
        >/dev/null || rc=1
    say "test: pydump tests with the sanitizer build"
    # (every reader on three interpreters of different families: the whole
    # matrix runs again below with the normal build)
    PYBPF_BUILD=$asan UBSAN_OPTIONS=halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
        "$HOST_PY" -m pytest -p no:cacheprovider -q tests/test_pydump.py \
        tests/test_pydump_stuck.py tests/test_pydump_core.py \
        -k 'host-3.11 or pyenv-3.9 or sid-3.14' || rc=1
    say "test: fuzz targets: committed inputs replayed, fixed exploration (tests/fuzz/run.sh)"
    # deterministic: the committed corpus and regression inputs, then -seed=1
    # and a fixed number of runs from them only, so every machine gives the
    # same verdict; time-based exploration (run.sh --explore) never gates
    "$ROOT/tests/fuzz/run.sh" || rc=1
    # Two passes: the tests not marked serial on two workers, a whole test
    # file per worker at a time (about half the time of one pass), then the
    # serial ones (they run tools over every Python process, or measure
    # cost) alone. Two workers whatever the machine, for one verdict.
    local pass
    for pass in parallel serial; do
        local args=(-m serial) start=$SECONDS
        [ $pass = serial ] || args=(-m "not serial" -n 2 --dist loadfile)
        say "test: $HOST_PY -m pytest -v ${args[*]} tests/ ($pass pass)"
        prc=0
        "$HOST_PY" -m pytest -p no:cacheprovider -v --durations=25 "${args[@]}" tests/ || prc=$?
        if [ $prc = 5 ]; then
            say "test: pytest collected no tests ($pass pass) - counted as failure"
        fi
        say "test: $pass pass took $(( (SECONDS - start) / 60 )) min"
        [ $prc = 0 ] || rc=1
    done
    if [ $rc = 0 ]; then say "test: all passed"; else say "test: FAILED"; fi
    return $rc
}

# --------------------------------------------------------------- quick --
# The quick tier: every check that needs no root, BPF, kernel headers,
# chroots or libbcc, with one verdict. What it cannot run here (no cppcheck,
# no clang for the fuzz targets) is named and counted as a failure, never
# passed over in silence.
do_quick() {
    local rc=0 start=$SECONDS
    [ -e "$BUILDDIR/meson-private/coredata.dat" ] || meson setup "$BUILDDIR" || return 1
    say "quick: meson compile -C $BUILDDIR"
    meson compile -C "$BUILDDIR" || return 1
    say "quick: meson test -C $BUILDDIR (unit tests, report writers, layer check)"
    meson test -C "$BUILDDIR" --print-errorlogs || rc=1
    if command -v cppcheck >/dev/null; then
        say "quick: cppcheck lib tools tests/unit"
        cppcheck -q --enable=warning,performance,portability --error-exitcode=1 \
            --inline-suppr -D__x86_64__ -I lib -I . -I tools -I "$BUILDDIR" lib tools tests/unit || rc=1
    else
        warn "quick: no cppcheck (apt-get install cppcheck): static check not run"; rc=1
    fi
    say "quick: tests/test_docs.py (man pages, examples, README, supported range)"
    PYBPF_BUILD=$ROOT/$BUILDDIR "$HOST_PY" -m pytest -p no:cacheprovider -q tests/test_docs.py || rc=1
    if command -v clang-14 >/dev/null || command -v clang >/dev/null; then
        say "quick: fuzz targets, committed inputs replayed (tests/fuzz/run.sh --replay)"
        "$ROOT/tests/fuzz/run.sh" --replay || rc=1
    else
        warn "quick: no clang (apt-get install clang-14 libclang-rt-14-dev): fuzz replay not run"; rc=1
    fi
    if [ $rc = 0 ]; then
        say "quick: all passed in $((SECONDS - start)) s"
    else
        say "quick: FAILED (after $((SECONDS - start)) s)"
    fi
    return $rc
}

# ---------------------------------------------------------------- main --
main() {
    local cmds=("$@") c
    [ ${#cmds[@]} -gt 0 ] || cmds=(deps headers tracefs build)
    for c in "${cmds[@]}"; do
        case $c in
        deps|headers|tracefs|build|chroots|austin|demo|quick|test|all) ;;
        -h|--help|help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
        esac
    done
    if [ "$(id -u)" != 0 ] && [ "${cmds[*]}" != quick ]; then
        echo "setup: must be run as root (try: sudo $0 ${cmds[*]})" >&2
        exit 1
    fi
    cd "$ROOT"
    for c in "${cmds[@]}"; do
        case $c in
        deps)    do_deps ;;
        headers) do_headers ;;
        tracefs) do_tracefs ;;
        build)   do_build ;;
        chroots) do_chroots ;;
        austin)  do_austin ;;
        demo)    run_demo ;;
        quick)   do_quick ;;
        test)    do_test ;;
        all)     do_deps; do_headers; do_tracefs; do_build; do_chroots ;;
        esac
    done
}

main "$@"
