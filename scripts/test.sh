#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#  0. lint: clang-format check of every tracked C++ file;
#  1. gcc: g++ Debug build with warnings as errors of the library and its surfaces, and their
#     tests: header self-containment, examples, install-then-consume, the C API (C tests, Go
#     example), the Python module (pytest) and the Kubernetes extender's server and load tests.
#     The GoogleTest unit tests are left out here (HETSCHED_BUILD_UNIT_TESTS=OFF): step 2 builds
#     and runs them all;
#  2. asan: every unit, conformance, C API and extender test under AddressSanitizer +
#     UndefinedBehaviorSanitizer (without the Python module and the compile-only header checks);
#  3. tsan: ThreadSanitizer build of only the target tsan_tests (top-level CMakeLists.txt: the
#     concurrent-reader tests of tests/concurrency and tests/c, and the extender's concurrency
#     tests), then only the ctest entries matching $tsan_tests below;
#  4. fuzz: clang build of only the libFuzzer targets (the importers' and the Kubernetes
#     extender's), each run briefly on its seed corpus;
#  5. release: g++ Release build with -Werror of the library, examples and benchmarks
#     (optimizer-only warnings), then their ctest entries: the benchmarks' smoke runs and the
#     simulator's pinned command-line runs, the examples.
# Ends with one line "N passed, N failed" over all ctest runs; exits non-zero on any failure.
# Build time is most of the suite's time: each unit test is compiled once (step 2), the Debug
# builds carry line tables only (-g1: enough for sanitizer and gdb backtraces with file:line), the
# fuzz build is -O1, the unit tests share one precompiled header (tests/CMakeLists.txt), and the
# three Debug steps (gcc, asan, tsan) compile the library targets in unity batches
# (HETSCHED_UNITY_BUILD: about a third of the CPU time of compiling them one by one; the
# optimised fuzz and release builds compile one by one, so that an optimiser warning seen only in
# a batch cannot fail them).
#
# Environment:
#   HETSCHED_CI_STEPS    steps to run, separated by spaces or commas, from lint gcc asan tsan
#                        fuzz release (default: all, in that order), e.g.
#                        HETSCHED_CI_STEPS=tsan bash scripts/test.sh
#   HETSCHED_SHARED_DIR  the shared/ folder (default: ../shared)
#   HETSCHED_FUZZ_SECONDS  seconds per fuzz target in step fuzz (default 10)
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
shared=${HETSCHED_SHARED_DIR:-$(cd .. && pwd)/shared}
steps=${HETSCHED_CI_STEPS:-lint gcc asan tsan fuzz release}
steps=" ${steps//,/ } "
for step in $steps; do
  case $step in
    lint | gcc | asan | tsan | fuzz | release) ;;
    *)
      echo "HETSCHED_CI_STEPS: unknown step '$step' (steps: lint gcc asan tsan fuzz release)" >&2
      exit 2
      ;;
  esac
done
passed=0
failed=0
status=0

wanted() { [[ $steps == *" $1 "* ]]; }  # $1 = step name

step_passed() { passed=$((passed + 1)); }
step_failed() {  # $1 = what failed
  echo "$1" >&2
  failed=$((failed + 1))
  status=1
}

run_ctest() {  # $1 = build dir, $2 = label, rest = extra ctest arguments
  local dir=$1 label=$2 log
  shift 2
  log=$(mktemp)
  (cd "$dir" && ctest --output-on-failure -j "$jobs" "$@" 2>&1) | tee "$log"
  local line
  line=$(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$log" | tail -n 1)
  if [[ -z "$line" ]]; then
    step_failed "$label: ctest printed no summary"
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

if wanted lint; then
  echo "== 0/5 lint: clang-format"
  if git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror; then
    step_passed
  else
    step_failed "clang-format: run clang-format -i on the files above"
  fi
fi

if wanted gcc; then
  echo "== 1/5 gcc: g++ Debug, -Werror, library + surfaces (unit tests: step 2)"
  mkdir -p build-ci
  if build build-ci -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DHETSCHED_WERROR=ON \
       -DHETSCHED_BUILD_UNIT_TESTS=OFF -DHETSCHED_UNITY_BUILD=ON; then
    run_ctest build-ci "gcc"
  else
    step_failed "gcc build failed"
  fi
  echo "(${SECONDS}s so far)"
fi

if wanted asan; then
  echo "== 2/5 asan: g++ AddressSanitizer + UndefinedBehaviorSanitizer"
  mkdir -p build-asan
  # The Python module is left out: CPython would need libasan preloaded.
  if build build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DHETSCHED_WERROR=ON \
       -DHETSCHED_SANITIZE=ON -DHETSCHED_UNITY_BUILD=ON \
       -DHETSCHED_INSTALL=OFF -DHETSCHED_BUILD_EXAMPLES=OFF -DHETSCHED_BUILD_PYTHON=OFF; then
    # hwloc's own leaks on input it refuses are suppressed (tests/lsan.supp), not ours.
    ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" \
      UBSAN_OPTIONS=print_stacktrace=1 run_ctest build-asan "asan"
  else
    step_failed "sanitizer build failed"
  fi
  echo "(${SECONDS}s so far)"
fi

# The ctest entries of the TSan step: the C++ concurrent readers (suite ConstReaders), the C
# API's (c_api.concurrent_readers_test) and the extender's concurrency tests (suites
# K8sExtenderServer*/K8sExtenderConcurrency*, and ServerTest until they are renamed).
tsan_readers='^ConstReaders\.|^c_api\.concurrent_readers_test$'
tsan_extender='K8sExtenderServer|K8sExtenderConcurrency|^k8s_extender\.ServerTest\.'
if wanted tsan; then
  echo "== 3/5 tsan: g++ ThreadSanitizer, concurrency tests only"
  tsan_start=$SECONDS
  mkdir -p build-tsan
  if BUILD_TARGET=tsan_tests build build-tsan -DCMAKE_BUILD_TYPE=Debug \
       -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DHETSCHED_WERROR=ON -DHETSCHED_SANITIZE_THREAD=ON \
       -DHETSCHED_UNITY_BUILD=ON \
       -DHETSCHED_INSTALL=OFF -DHETSCHED_BUILD_EXAMPLES=OFF -DHETSCHED_BUILD_PYTHON=OFF \
       -DHETSCHED_WITH_HWLOC=OFF; then
    # A regex that matches nothing would pass silently: check both groups are there.
    tsan_ok=1
    for group in "$tsan_readers" "$tsan_extender"; do
      if [[ $(cd build-tsan && ctest -N -R "$group" | grep -c "Test *#") == 0 ]]; then
        step_failed "tsan: no ctest entry matches '$group'"
        tsan_ok=0
      fi
    done
    if ((tsan_ok)); then
      # Races reported from inside Debian's uninstrumented cpp-httplib are suppressed
      # (tests/tsan.supp says why); hetsched's own code is all instrumented.
      TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" \
        run_ctest build-tsan "tsan" -R "$tsan_readers|$tsan_extender"
    fi
  else
    step_failed "tsan build failed"
  fi
  echo "(tsan step took $((SECONDS - tsan_start))s; ${SECONDS}s so far)"
fi

if wanted fuzz; then
  echo "== 4/5 fuzz: clang libFuzzer targets (short smoke run each)"
  mkdir -p build-fuzz
  # Only the fuzz targets (and the libraries they link) are built here: the unit tests already ran.
  fuzz_targets="tests/fuzz/all k8s_extender_request_fuzz k8s_extender_pod_spec_fuzz"
  fuzz_targets+=" k8s_extender_http_fuzz"
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
fi

if wanted release; then
  echo "== 5/5 release: g++ Release, -Werror: library, examples, benchmarks"
  mkdir -p build-release-ci
  if build build-release-ci -DCMAKE_BUILD_TYPE=Release -DHETSCHED_WERROR=ON -DHETSCHED_BUILD_TESTS=OFF \
       -DHETSCHED_BUILD_BENCH=ON -DHETSCHED_INSTALL=OFF -DHETSCHED_BUILD_PYTHON=OFF \
       -DHETSCHED_BUILD_C_API=OFF -DHETSCHED_BUILD_K8S_EXTENDER=OFF; then
    run_ctest build-release-ci "release"
  else
    step_failed "Release build failed"
  fi
  echo "(${SECONDS}s so far)"
fi

echo "suite took ${SECONDS}s"
echo "test: $passed passed, $failed failed"
exit $status
