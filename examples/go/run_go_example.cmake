# SPDX-License-Identifier: MIT
# Builds examples/go with Debian's golang-go through cgo, offline, and runs it. Called by ctest
# (c_api.go_example) with -DGO= -DSOURCE_DIR= -DINCLUDE_DIR= -DLIB_DIR= -DWORK_DIR=.
# GOPATH mode (GO111MODULE=off) needs no go.mod and no network; the build cache lives in WORK_DIR.
foreach(var GO SOURCE_DIR INCLUDE_DIR LIB_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_go_example.cmake: -D${var}= is required")
  endif()
endforeach()
file(MAKE_DIRECTORY ${WORK_DIR}/cache ${WORK_DIR}/gopath)
set(ENV{GO111MODULE} off)
set(ENV{GOFLAGS} "")
set(ENV{GOPROXY} off)
set(ENV{GOCACHE} ${WORK_DIR}/cache)
set(ENV{GOPATH} ${WORK_DIR}/gopath)
set(ENV{CGO_ENABLED} 1)
# Go's build cache does not hash headers outside the package: a stamp of the C headers in the
# flags (part of the cache key) rebuilds the program when they change.
file(GLOB headers ${INCLUDE_DIR}/hetsched/c/*.h)
list(SORT headers)
set(stamp "")
foreach(header IN LISTS headers)
  file(SHA256 ${header} hash)
  string(APPEND stamp ${hash})
endforeach()
string(SHA256 stamp "${stamp}")
string(SUBSTRING ${stamp} 0 16 stamp)
set(ENV{CGO_CFLAGS} "-I${INCLUDE_DIR} -DHS_HEADER_STAMP=${stamp}")
set(ENV{CGO_LDFLAGS} "-L${LIB_DIR} -Wl,-rpath,${LIB_DIR}")
execute_process(COMMAND ${GO} build -o ${WORK_DIR}/hetsched-go-scheduler main.go
                WORKING_DIRECTORY ${SOURCE_DIR}
                RESULT_VARIABLE build_result)
if(NOT build_result EQUAL 0)
  message(FATAL_ERROR "go build failed (${build_result})")
endif()
execute_process(COMMAND ${WORK_DIR}/hetsched-go-scheduler RESULT_VARIABLE run_result)
if(NOT run_result EQUAL 0)
  message(FATAL_ERROR "hetsched-go-scheduler failed (${run_result})")
endif()
