# SPDX-License-Identifier: MIT
# Sanitizer instrumentation for every in-tree target (included by the top-level CMakeLists.txt):
#  - HETSCHED_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer (CI step 2);
#  - HETSCHED_SANITIZE_THREAD: ThreadSanitizer (CI step "tsan": the concurrent-reader tests and
#    the extender's concurrency tests; build the target tsan_tests only);
#  - HETSCHED_BUILD_FUZZERS: libFuzzer coverage with ASan + UBSan (clang).
# TSan cannot be combined with ASan in one binary, so HETSCHED_SANITIZE_THREAD excludes the other
# two. HETSCHED_SANITIZER_BUILD is set when any sanitizer runtime is linked, for targets that
# cannot carry one (the Go example's cgo link) or must not insist on a complete link of a shared
# library (the runtime's symbols come from the executable).

if(HETSCHED_SANITIZE_THREAD AND (HETSCHED_SANITIZE OR HETSCHED_BUILD_FUZZERS))
  message(FATAL_ERROR "HETSCHED_SANITIZE_THREAD (ThreadSanitizer) cannot be combined with "
                      "HETSCHED_SANITIZE or HETSCHED_BUILD_FUZZERS (AddressSanitizer); use a "
                      "separate build tree")
endif()

set(HETSCHED_SANITIZER_BUILD OFF)
if(HETSCHED_BUILD_FUZZERS)
  # Instrument the library too, so coverage guides the fuzzers into the importers.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  set(HETSCHED_SANITIZER_BUILD ON)
endif()
if(HETSCHED_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  set(HETSCHED_SANITIZER_BUILD ON)
endif()
if(HETSCHED_SANITIZE_THREAD)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  set(HETSCHED_SANITIZER_BUILD ON)
endif()
