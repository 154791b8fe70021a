#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#  0. clang-format check of every tracked C++ file;
#  1. g++ Debug build with warnings as errors: unit tests, header self-containment, examples,
#     install-then-consume, benchmarks built and smoke-run, the C API (C tests, Go example), the
#     Python module (pytest) and the Kubernetes extender (replay and load tests);
#  2. the same tests under AddressSanitizer + UndefinedBehaviorSanitizer (without the Python
#     module and the compile-only header checks);
#  3. clang build of only the libFuzzer targets (the importers' and the Kubernetes extender's),
#     each run briefly on its seed corpus;
#  4. g++ Release build with -Werror of the library, examples and benchmarks (optimizer-only
#     warnings), then the topology inspector on a built-in cluster.
# Ends with one line "N passed, N failed" over all ctest runs; exits non-zero on any failure.
# Build time is most of the suite's time: the Debug builds carry line tables only (-g1: enough
# for sanitizer and gdb backtraces with file:line), the fuzz build is -O1, and the unit tests
# share one precompiled header (tests/CMakeLists.txt).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
shared=${HETSCHED_SHARED_DIR:-$(cd .. && pwd)/shared}
passed=0
failed=0
status=0

step_passed() { passed=$((passed + 1)); }
step_failed() {  # $1 = what failed
  echo "$1" >&2
  failed=$((failed + 1))
  status=1
}

run_ctest() {  # $1 = build dir, $2 = label
  local log
  log=$(mktemp)
  (cd "$1" && ctest --output-on-failure -j "$jobs" 2>&1) | tee "$log"
  local line
  line=$(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$log" | tail -n 1)
  if [[ -z "$line" ]]; then
    step_failed "$2: ctest printed no summary"
  else
    local f t
    f=$(sed -E 's/.*passed, ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$line")
    t=$(sed -E 's/.*passed, ([0-9]+) tests failed out of ([0-9]+).*/\2/' <<<"$line")
    passed=$((passed + t - f))
    failed=$((failed + f))
    ((f == 0)) || status=1
  fi
  rm -f "$log"
}

build() {  # $1 = build dir, rest = cmake options; $BUILD_TARGET (optional) = what to build
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja --warn-uninitialized -DHETSCHED_SHARED_DIR="$shared" "$@" \
    2>&1 | tee "$dir.configure.log" >/dev/null || return 1
  if grep -q "Manually-specified variables were not used" "$dir.configure.log"; then
    echo "$dir: CMake ignored a -D option (mistyped?)" >&2
    return 1
  fi
  # shellcheck disable=SC2086 # BUILD_TARGET may name several targets
  cmake --build "$dir" -j "$jobs" ${BUILD_TARGET:+--target $BUILD_TARGET}
}

echo "== lint: clang-format"
if git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror; then
  step_passed
else
  step_failed "clang-format: run clang-format -i on the files above"
fi

echo "== 1/4 g++ Debug, -Werror, tests + examples + benchmarks"
mkdir -p build-ci
if build build-ci -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DHETSCHED_WERROR=ON \
     -DHETSCHED_BUILD_BENCH=ON; then
  run_ctest build-ci "gcc"
else
  step_failed "gcc build failed"
fi

echo "(${SECONDS}s so far)"
echo "== 2/4 g++ AddressSanitizer + UndefinedBehaviorSanitizer"
mkdir -p build-asan
# The Python module is left out: CPython would need libasan preloaded.
if build build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DHETSCHED_WERROR=ON \
     -DHETSCHED_SANITIZE=ON \
     -DHETSCHED_INSTALL=OFF -DHETSCHED_BUILD_EXAMPLES=OFF -DHETSCHED_BUILD_PYTHON=OFF; then
  # hwloc's own leaks on input it refuses are suppressed (tests/lsan.supp), not ours.
  ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" \
    UBSAN_OPTIONS=print_stacktrace=1 run_ctest build-asan "asan"
else
  step_failed "sanitizer build failed"
fi

echo "(${SECONDS}s so far)"
echo "== 3/4 clang libFuzzer targets (short smoke run each)"
mkdir -p build-fuzz
# Only the fuzz targets (and the libraries they link) are built here: the unit tests already ran.
fuzz_targets="tests/fuzz/all k8s_extender_request_fuzz k8s_extender_pod_spec_fuzz"
if BUILD_TARGET=$fuzz_targets build build-fuzz -DCMAKE_CXX_COMPILER=clang++ \
     -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
     -DHETSCHED_WERROR=ON -DHETSCHED_BUILD_FUZZERS=ON \
     -DHETSCHED_BUILD_EXAMPLES=OFF -DHETSCHED_INSTALL=OFF -DHETSCHED_BUILD_C_API=OFF \
     -DHETSCHED_BUILD_PYTHON=OFF -DHETSCHED_BUILD_K8S_EXTENDER=ON; then
  if bash scripts/fuzz.sh build-fuzz "${HETSCHED_FUZZ_SECONDS:-10}"; then
    step_passed
  else
    step_failed "fuzzing found a problem (see above)"
  fi
else
  step_failed "clang fuzz build failed"
fi

echo "(${SECONDS}s so far)"
echo "== 4/4 g++ Release, -Werror: library, examples, benchmarks"
mkdir -p build-release-ci
if build build-release-ci -DCMAKE_BUILD_TYPE=Release -DHETSCHED_WERROR=ON -DHETSCHED_BUILD_TESTS=OFF \
     -DHETSCHED_BUILD_BENCH=ON -DHETSCHED_INSTALL=OFF -DHETSCHED_BUILD_PYTHON=OFF \
     -DHETSCHED_BUILD_C_API=OFF -DHETSCHED_BUILD_K8S_EXTENDER=OFF &&
   ./build-release-ci/examples/hetsched-topo demo >/dev/null; then
  step_passed
else
  step_failed "Release build failed"
fi

echo "suite took ${SECONDS}s"
echo "test: $passed passed, $failed failed"
exit $status
