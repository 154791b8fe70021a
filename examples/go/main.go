// SPDX-License-Identifier: MIT

// Command hetsched-go-scheduler shows that a Go scheduler can embed hetsched through its C API
// (libhetsched_c) with cgo. It builds a 4-node DGX A100 cluster, admits jobs through capacity
// queues, places the admitted gangs with the topology-aware packer, then places pods with HiveD
// on cells derived from the same cluster. It prints every decision and exits non-zero when a
// decision differs from the expected one, so the test suite can run it.
//
// Build (examples/go/run_go_example.cmake does this for ctest):
//
//	CGO_CFLAGS=-I<repo>/include CGO_LDFLAGS="-L<libdir> -Wl,-rpath,<libdir>" \
//	  GO111MODULE=off go build -o hetsched-go-scheduler main.go
package main

/*
#cgo LDFLAGS: -lhetsched_c
#include <stdlib.h>
#include <hetsched/c/hetsched.h>
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"unsafe"
)

// hs_last_error is thread-local: keep the goroutine on one OS thread so the message read after
// a failed call is the one that call set.
func init() { runtime.LockOSThread() }

// check turns an hs_status into a Go error carrying the library's message.
func check(status C.hs_status, what string) error {
	if status == C.HS_OK {
		return nil
	}
	return fmt.Errorf("%s: %s: %s", what, C.GoString(C.hs_status_name(status)),
		C.GoString(C.hs_last_error()))
}

// cstrings keeps C copies of Go strings alive until free().
type cstrings struct{ ptrs []*C.char }

func (c *cstrings) get(s string) *C.char {
	p := C.CString(s)
	c.ptrs = append(c.ptrs, p)
	return p
}

func (c *cstrings) free() {
	for _, p := range c.ptrs {
		C.free(unsafe.Pointer(p))
	}
	c.ptrs = nil
}

// bind is one placed task read back from a decision.
type bind struct {
	job  uint64
	name string
	task uint32
	node string
	gpus []uint32
}

func binds(d *C.hs_decision_t) ([]bind, error) {
	var out []bind
	for i := C.size_t(0); i < C.hs_decision_bind_count(d); i++ {
		b := C.hs_bind_t{struct_size: C.uint32_t(unsafe.Sizeof(C.hs_bind_t{}))}
		if err := check(C.hs_decision_bind_at(d, i, &b), "bind_at"); err != nil {
			return nil, err
		}
		gpus := make([]uint32, 0, b.gpu_count)
		for _, g := range unsafe.Slice(b.gpus, b.gpu_count) {
			gpus = append(gpus, uint32(g))
		}
		out = append(out, bind{uint64(b.job_id), C.GoString(b.job_name), uint32(b.task),
			C.GoString(b.node_name), gpus})
	}
	return out, nil
}

func deferrals(d *C.hs_decision_t) []string {
	var out []string
	for i := C.size_t(0); i < C.hs_decision_deferral_count(d); i++ {
		f := C.hs_deferral_t{struct_size: C.uint32_t(unsafe.Sizeof(C.hs_deferral_t{}))}
		if C.hs_decision_deferral_at(d, i, &f) == C.HS_OK {
			out = append(out, fmt.Sprintf("%s: %s", C.GoString(C.hs_defer_reason_name(f.reason)),
				C.GoString(f.message)))
		}
	}
	return out
}

// failures counts mismatches between decisions and expectations.
var failures int

func expect(ok bool, format string, args ...any) {
	if !ok {
		failures++
		fmt.Printf("MISMATCH: "+format+"\n", args...)
	}
}

func sameGPUs(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// gangJob is a job of the example workload: tasks x GPUs in a capacity queue.
type gangJob struct {
	id    uint64
	queue string
	tasks uint32
	gpus  uint32
}

func main() {
	if err := run(); err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	if failures > 0 {
		fmt.Printf("%d mismatches\n", failures)
		os.Exit(1)
	}
	fmt.Println("all decisions as expected")
}

func run() error {
	var strs cstrings
	defer strs.free()
	fmt.Printf("hetsched %s (C API %d)\n", C.GoString(C.hs_version()), int(C.hs_api_version()))

	// The cluster: 4 DGX A100 in racks of 2.
	opts := C.hs_cluster_options_t{
		struct_size:    C.uint32_t(unsafe.Sizeof(C.hs_cluster_options_t{})),
		node_count:     4,
		nodes_per_rack: 2,
		name_prefix:    strs.get("n"),
	}
	var cluster *C.hs_cluster_t
	if err := check(C.hs_cluster_from_template(strs.get("dgx-a100"), &opts, &cluster),
		"cluster"); err != nil {
		return err
	}
	defer C.hs_cluster_free(cluster)
	var model *C.char
	if err := check(C.hs_cluster_gpu_type(cluster, 0, 0, &model), "gpu type"); err != nil {
		return err
	}
	fmt.Printf("cluster: %d nodes, %d GPUs of %s\n", int(C.hs_cluster_node_count(cluster)),
		int(C.hs_cluster_gpu_count(cluster)), C.GoString(model))
	expect(C.hs_cluster_gpu_count(cluster) == 32, "cluster GPU count")

	if err := capacityAndPacker(cluster, &strs); err != nil {
		return err
	}
	return hivedOnDerivedCells(cluster, &strs)
}

// capacityAndPacker admits jobs through two queues of one cohort, then places the admitted jobs.
func capacityAndPacker(cluster *C.hs_cluster_t, strs *cstrings) error {
	var spec *C.hs_capacity_spec_t
	if err := check(C.hs_capacity_spec_new(&spec), "spec"); err != nil {
		return err
	}
	defer C.hs_capacity_spec_free(spec)
	steps := []C.hs_status{
		C.hs_capacity_spec_add_cohort(spec, strs.get("org"), nil),
		C.hs_capacity_spec_add_queue(spec, strs.get("research"), strs.get("org"), C.HS_ORDER_PRIORITY),
		C.hs_capacity_spec_add_queue(spec, strs.get("prod"), strs.get("org"), C.HS_ORDER_PRIORITY),
		C.hs_capacity_spec_add_quota(spec, strs.get("research"), strs.get("a100"), strs.get("gpu"),
			16000, C.HS_NO_LIMIT, C.HS_NO_LIMIT),
		C.hs_capacity_spec_add_quota(spec, strs.get("prod"), strs.get("a100"), strs.get("gpu"),
			16000, C.HS_NO_LIMIT, C.HS_NO_LIMIT),
	}
	for i, s := range steps {
		if err := check(s, fmt.Sprintf("spec step %d", i)); err != nil {
			return err
		}
	}
	var queues *C.hs_capacity_t
	if err := check(C.hs_capacity_new(spec, &queues), "capacity"); err != nil {
		return err
	}
	defer C.hs_capacity_free(queues)

	jobs := []gangJob{{1, "research", 2, 8}, {2, "research", 1, 8}, {3, "prod", 1, 4}}
	resource := (**C.char)(C.malloc(C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	defer C.free(unsafe.Pointer(resource))
	*resource = strs.get("gpu")
	amount := (*C.int64_t)(C.malloc(8))
	defer C.free(unsafe.Pointer(amount))
	for _, j := range jobs {
		*amount = C.int64_t(j.tasks * j.gpus * 1000)
		cj := C.hs_capacity_job_t{
			struct_size:    C.uint32_t(unsafe.Sizeof(C.hs_capacity_job_t{})),
			job_id:         C.uint64_t(j.id),
			queue:          strs.get(j.queue),
			resources:      resource,
			amounts:        amount,
			resource_count: 1,
		}
		if err := check(C.hs_capacity_submit(queues, &cj), "submit"); err != nil {
			return err
		}
	}
	var plan *C.hs_decision_t
	if err := check(C.hs_capacity_plan(queues, nil, &plan), "plan"); err != nil {
		return err
	}
	defer C.hs_decision_free(plan)
	admitted := map[uint64]bool{}
	for i := C.size_t(0); i < C.hs_decision_admission_count(plan); i++ {
		a := C.hs_admission_t{struct_size: C.uint32_t(unsafe.Sizeof(C.hs_admission_t{}))}
		if err := check(C.hs_decision_admission_at(plan, i, &a), "admission"); err != nil {
			return err
		}
		fmt.Printf("admit job %d in %s flavor %s borrowing=%d\n", uint64(a.job_id),
			C.GoString(a.queue), C.GoString(a.flavor), int(a.borrowing))
		admitted[uint64(a.job_id)] = true
		// research asks for 24 GPUs against 16 of quota: job 2 borrows prod's idle GPUs
		expect((a.borrowing != 0) == (a.job_id == 2), "borrowing flag of job %d", uint64(a.job_id))
	}
	expect(len(admitted) == 3, "all three jobs admitted, got %d", len(admitted))
	if err := check(C.hs_capacity_apply(queues, plan), "apply"); err != nil {
		return err
	}

	// Place the admitted jobs in job-id order with the packer.
	var packer *C.hs_packer_t
	if err := check(C.hs_packer_new(cluster, &packer), "packer"); err != nil {
		return err
	}
	defer C.hs_packer_free(packer)
	want := map[uint64][]bind{
		1: {{node: "n-0", gpus: []uint32{0, 1, 2, 3, 4, 5, 6, 7}},
			{node: "n-1", gpus: []uint32{0, 1, 2, 3, 4, 5, 6, 7}}},
		2: {{node: "n-2", gpus: []uint32{0, 1, 2, 3, 4, 5, 6, 7}}},
		3: {{node: "n-3", gpus: []uint32{0, 1, 2, 3}}},
	}
	ids := make([]uint64, 0, len(admitted))
	for id := range admitted {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	for _, id := range ids {
		j := jobs[id-1]
		g := C.hs_gang_t{
			struct_size:   C.uint32_t(unsafe.Sizeof(C.hs_gang_t{})),
			job_id:        C.uint64_t(id),
			tasks:         C.uint32_t(j.tasks),
			gpus_per_task: C.uint32_t(j.gpus),
			locality:      C.HS_LOCALITY_CONSOLIDATE,
		}
		var d *C.hs_decision_t
		if err := check(C.hs_packer_place(packer, &g, &d), "place"); err != nil {
			return err
		}
		got, err := binds(d)
		if err == nil {
			err = check(C.hs_packer_commit(packer, d), "commit")
		}
		for _, f := range deferrals(d) {
			fmt.Printf("job %d deferred: %s\n", id, f)
		}
		C.hs_decision_free(d)
		if err != nil {
			return err
		}
		expect(len(got) == len(want[id]), "job %d: %d tasks placed", id, len(got))
		for i, b := range got {
			fmt.Printf("bind job %d task %d -> %s GPUs %v\n", b.job, b.task, b.node, b.gpus)
			if i < len(want[id]) {
				expect(b.node == want[id][i].node && sameGPUs(b.gpus, want[id][i].gpus),
					"job %d task %d: want %s %v", id, i, want[id][i].node, want[id][i].gpus)
			}
		}
	}
	// Job 1 finishes: both the queue and the packer release it.
	if err := check(C.hs_capacity_release(queues, 1), "release quota"); err != nil {
		return err
	}
	if err := check(C.hs_packer_release(packer, 1), "release GPUs"); err != nil {
		return err
	}
	var free C.uint32_t
	if err := check(C.hs_packer_free_gpu_count(packer, 0, &free), "free"); err != nil {
		return err
	}
	expect(free == 8, "n-0 free after release: %d", uint32(free))
	// An unknown queue is an error with a message naming it.
	bad := C.hs_capacity_job_t{
		struct_size: C.uint32_t(unsafe.Sizeof(C.hs_capacity_job_t{})),
		job_id:      9,
		queue:       strs.get("nope"),
	}
	err := check(C.hs_capacity_submit(queues, &bad), "submit")
	fmt.Println("expected error:", err)
	expect(err != nil && C.hs_capacity_pending_count(queues) == 0, "unknown queue refused")
	return nil
}

// hivedOnDerivedCells runs HiveD on cells derived from the cluster: one VC owns two nodes.
func hivedOnDerivedCells(cluster *C.hs_cluster_t, strs *cstrings) error {
	var cfg *C.hs_hived_config_t
	if err := check(C.hs_hived_config_new(&cfg), "config"); err != nil {
		return err
	}
	defer C.hs_hived_config_free(cfg)
	if err := check(C.hs_hived_config_derive_cells(cfg, cluster, 0), "derive"); err != nil {
		return err
	}
	nodeType := ""
	for i := C.size_t(0); i < C.hs_hived_config_cell_type_count(cfg); i++ {
		var name *C.char
		if C.hs_hived_config_cell_type_name(cfg, i, &name) == C.HS_OK &&
			C.GoString(name) == "dgx-a100/node" {
			nodeType = C.GoString(name)
		}
	}
	expect(nodeType != "", "derived node cell type dgx-a100/node")
	if err := check(C.hs_hived_config_add_virtual_cells(cfg, strs.get("vc1"), strs.get(nodeType), 2),
		"vc"); err != nil {
		return err
	}
	var hived *C.hs_hived_t
	if err := check(C.hs_hived_new(cfg, &hived), "hived"); err != nil {
		return err
	}
	defer C.hs_hived_free(hived)
	// Top-level node cells: HiveD takes free cells from the end of its free list (removal swaps
	// with the last element, as in hivedscheduler), so the VC's pods land on n-3, then n-2.
	wantNodes := []string{"n-3", "n-2"}
	for i, name := range []string{"train-0", "train-1"} {
		pod := C.hs_hived_pod_t{
			struct_size: C.uint32_t(unsafe.Sizeof(C.hs_hived_pod_t{})),
			name:        strs.get(name),
			vc:          strs.get("vc1"),
			priority:    1,
			leaf_cells:  8,
		}
		var d *C.hs_decision_t
		if err := check(C.hs_hived_schedule(hived, &pod, C.HS_HIVED_FILTERING, &d),
			"schedule"); err != nil {
			return err
		}
		got, err := binds(d)
		if err == nil {
			err = check(C.hs_hived_commit(hived, d), "hived commit")
		}
		C.hs_decision_free(d)
		if err != nil {
			return err
		}
		expect(len(got) == 1, "pod %s bound", name)
		if len(got) == 1 {
			fmt.Printf("hived pod %s -> %s GPUs %v\n", got[0].name, got[0].node, got[0].gpus)
			expect(got[0].node == wantNodes[i] && len(got[0].gpus) == 8,
				"pod %s: want node %s with 8 GPUs", name, wantNodes[i])
		}
	}
	// The VC owns two nodes: a third 8-GPU pod waits.
	pod := C.hs_hived_pod_t{
		struct_size: C.uint32_t(unsafe.Sizeof(C.hs_hived_pod_t{})),
		name:        strs.get("train-2"),
		vc:          strs.get("vc1"),
		priority:    1,
		leaf_cells:  8,
	}
	var d *C.hs_decision_t
	if err := check(C.hs_hived_schedule(hived, &pod, C.HS_HIVED_FILTERING, &d), "schedule"); err != nil {
		return err
	}
	waits := deferrals(d)
	C.hs_decision_free(d)
	fmt.Println("hived pod train-2:", waits)
	expect(len(waits) == 1, "third pod waits")
	// An unknown VC is an error naming it.
	pod.vc = strs.get("vc9")
	err := check(C.hs_hived_schedule(hived, &pod, C.HS_HIVED_FILTERING, &d), "schedule")
	fmt.Println("expected error:", err)
	expect(err != nil, "unknown VC refused")
	return check(C.hs_hived_release(hived, strs.get("train-0")), "hived release")
}
