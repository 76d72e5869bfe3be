#!/usr/bin/env bash
# install-deps.sh -- make sure the tools and libraries the workbook needs are
# here; install the missing ones with apt-get (Debian 12).  Run by `make`,
# `make deps` and .ci/run.  As root it installs; otherwise it prints the
# exact command to run and fails.  Quiet and quick when nothing is missing.
#
#   install-deps.sh           what building, testing and grading need
#   install-deps.sh --docs    also what `make docs` needs (KaTeX, gnuplot)
#   install-deps.sh --bench   also what `make bench` needs: OpenBLAS itself
#                             (its pkg-config file, which points at its own
#                             cblas.h; Debian's reference BLAS, libblas-dev,
#                             also installs a cblas.h, without OpenBLAS's
#                             functions) and NumPy, the baseline beside it
#   install-deps.sh --dev     also what `make watch` (inotify-tools),
#                             `make compile_commands.json` (bear) and
#                             `make debug` (gdb) want
#   install-deps.sh --fuzz    also what `make fuzz` needs (clang, libFuzzer)
#   install-deps.sh --compat  also gcc and g++ 11, Ubuntu 22.04's (make
#                             compat-check)
#   install-deps.sh --check   also what `make check` needs (the docs, a
#                             headless Chromium, patch, --bench's libraries
#                             for its smoke pass, --dev's, --fuzz's and
#                             --compat's tools, epubcheck, PyYAML for the
#                             GitHub Classroom workflow's check, Slurm with
#                             MUNGE for the test of RUNNER=slurm, and
#                             jsonschema and xmllint for the reports' schemas)
set -euo pipefail

# "how to tell it is here" and the Debian package that provides it
checks=(
    "cmd:gcc              gcc"
    "cmd:g++              g++"
    "cmd:make             make"
    "cmd:pkg-config       pkg-config"
    "cmd:python3          python3"
    "pc:check             check"
    "pc:libcjson          libcjson-dev"
    "cmd:gcovr            gcovr"
    "cmd:pandoc           pandoc"
    "cmd:bwrap            bubblewrap"
)
docs=("file:/usr/share/javascript/katex/katex.min.js libjs-katex" "cmd:gnuplot          gnuplot-nox")
dev=("cmd:inotifywait        inotify-tools" "cmd:bear             bear" "cmd:gdb              gdb")
fuzz=("cmd:clang            clang" "rt:fuzzer            libclang-rt-14-dev")
compat=("cmd:gcc-11           gcc-11" "cmd:g++-11           g++-11")
bench=("pc:openblas          libopenblas-dev" "py:numpy             python3-numpy")
case "${1:-}" in
    "") ;;
    --docs)  checks+=("${docs[@]}") ;;
    --bench) checks+=("${bench[@]}") ;;
    --dev)   checks+=("${dev[@]}") ;;
    --fuzz)  checks+=("${fuzz[@]}") ;;
    --compat) checks+=("${compat[@]}") ;;
    --check) checks+=("${docs[@]}" "${compat[@]}" "cmd:chromium         chromium" "cmd:patch            patch"
                      "${bench[@]}" "${dev[@]}" "${fuzz[@]}" "file:/usr/share/java/epubcheck.jar epubcheck"
                      "py:yaml              python3-yaml" "py:jsonschema        python3-jsonschema"
                      "cmd:xmllint          libxml2-utils"
                      "cmd:slurmctld        slurm-wlm" "cmd:munged           munge") ;;
    *) echo "usage: install-deps.sh [--docs|--bench|--dev|--fuzz|--compat|--check]" >&2; exit 2 ;;
esac

missing=()
for entry in "${checks[@]}"; do
    read -r probe pkg <<<"$entry"
    kind=${probe%%:*} name=${probe#*:}
    case $kind in
        cmd) command -v "$name" >/dev/null 2>&1 && continue ;;
        pc)  command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$name" && continue ;;
        # Debian's python3, where apt installs modules (a python3 that comes
        # first on PATH, pyenv's say, does not see them)
        py)  /usr/bin/python3 -c "import $name" >/dev/null 2>&1 && continue ;;
        file) [ -e "$name" ] && continue ;;
        # a clang runtime library, e.g. libclang_rt.fuzzer-x86_64.a
        rt)  f=$(clang -print-file-name="libclang_rt.$name-$(uname -m).a" 2>/dev/null) &&
             [ -e "$f" ] && continue ;;
    esac
    missing+=("$pkg")
done

[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing Debian packages: ${missing[*]}" >&2
    echo "install-deps: run this, then try again:" >&2
    echo "    sudo sh -c '$cmd'" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: missing ${missing[*]}, and this is not a Debian system (no apt-get);" >&2
    echo "install-deps: install the equivalent packages by hand." >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
