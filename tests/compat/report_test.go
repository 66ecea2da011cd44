package compat_test

// The suite's report (issue 4 §3): every case records its category, and
// TestMain prints, after all tests ran, one line per category and the
// closing line "N passed, N failed":
//
//	compat: corpus cases=40 passed=40 failed=0
//	...
//	61 passed, 0 failed
//
// A case is a test or subtest that called record. It passed when it ended
// neither failed nor skipped; skipped cases (no node, no corpus: loud skips,
// never in CI) are listed as skipped=N on the category line when there are any.

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Categories of the report, in the order they are printed.
const (
	catCorpus       = "corpus"
	catLanceToUs    = "lance->us"
	catUsToLance    = "us->lance"
	catRefusal      = "refusal"
	catInterleaving = "interleaving"
	catSnapshots    = "snapshots"
	catIndex        = "index"
)

// categories lists the report's categories in print order.
func categories() []string {
	return []string{catCorpus, catLanceToUs, catUsToLance, catRefusal, catInterleaving, catSnapshots, catIndex}
}

// caseResult is the outcome of one recorded case.
type caseResult struct {
	name     string
	category string
	failed   bool
	skipped  bool
}

// caseRegistry collects the outcomes of recorded cases. Tests run in
// parallel only through t.Run's goroutines, so it is guarded by a mutex.
type caseRegistry struct {
	mu      sync.Mutex
	results []caseResult
}

// suiteReport is the one registry of this test binary: TestMain prints it.
// It is the only package-level state of the suite and exists because Go
// gives tests no other channel to TestMain.
var suiteReport = &caseRegistry{}

// record makes t a case of category: its outcome is counted when t ends.
func record(t *testing.T, category string) {
	t.Helper()
	known := false
	for _, c := range categories() {
		known = known || c == category
	}
	if !known {
		t.Fatalf("record: unknown report category %q", category)
	}
	t.Cleanup(func() {
		suiteReport.add(caseResult{name: t.Name(), category: category, failed: t.Failed(), skipped: t.Skipped()})
	})
}

func (r *caseRegistry) add(c caseResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = append(r.results, c)
}

// write prints the category lines and the closing line; it returns the
// totals.
func (r *caseRegistry) write(w io.Writer) (passed, failed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	type counts struct{ cases, passed, failed, skipped int }
	by := map[string]*counts{}
	for _, c := range categories() {
		by[c] = &counts{}
	}
	var failedNames []string
	for _, c := range r.results {
		n := by[c.category]
		n.cases++
		switch {
		case c.failed:
			n.failed++
			failedNames = append(failedNames, c.name)
		case c.skipped:
			n.skipped++
		default:
			n.passed++
		}
	}
	fmt.Fprintln(w)
	for _, c := range categories() {
		n := by[c]
		line := fmt.Sprintf("compat: %s cases=%d passed=%d failed=%d", c, n.cases, n.passed, n.failed)
		if n.skipped > 0 {
			line += fmt.Sprintf(" skipped=%d", n.skipped)
		}
		fmt.Fprintln(w, line)
		passed += n.passed
		failed += n.failed
	}
	sort.Strings(failedNames)
	for _, name := range failedNames {
		fmt.Fprintf(w, "compat: FAILED %s\n", name)
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed)
	return passed, failed
}

func TestMain(m *testing.M) {
	code := m.Run()
	suiteReport.write(os.Stdout)
	os.Exit(code)
}

// TestReportFormat checks the report lines: one per category in order,
// skipped counts only where there are any, failed cases named, and the
// closing totals line.
func TestReportFormat(t *testing.T) {
	cases := []struct {
		name    string
		results []caseResult
		want    string
		passed  int
		failed  int
	}{
		{name: "empty", want: `
compat: corpus cases=0 passed=0 failed=0
compat: lance->us cases=0 passed=0 failed=0
compat: us->lance cases=0 passed=0 failed=0
compat: refusal cases=0 passed=0 failed=0
compat: interleaving cases=0 passed=0 failed=0
compat: snapshots cases=0 passed=0 failed=0
compat: index cases=0 passed=0 failed=0
0 passed, 0 failed
`},
		{name: "mixed", results: []caseResult{
			{name: "TestB/x", category: catRefusal, failed: true},
			{name: "TestA", category: catCorpus},
			{name: "TestA/y", category: catCorpus, skipped: true},
			{name: "TestC", category: catSnapshots},
			{name: "TestA/a", category: catCorpus, failed: true},
		}, passed: 2, failed: 2, want: `
compat: corpus cases=3 passed=1 failed=1 skipped=1
compat: lance->us cases=0 passed=0 failed=0
compat: us->lance cases=0 passed=0 failed=0
compat: refusal cases=1 passed=0 failed=1
compat: interleaving cases=0 passed=0 failed=0
compat: snapshots cases=1 passed=1 failed=0
compat: index cases=0 passed=0 failed=0
compat: FAILED TestA/a
compat: FAILED TestB/x
2 passed, 2 failed
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &caseRegistry{results: tc.results}
			var b strings.Builder
			passed, failed := r.write(&b)
			if b.String() != tc.want || passed != tc.passed || failed != tc.failed {
				t.Errorf("report:\n%s(%d, %d)\nwant:\n%s(%d, %d)", b.String(), passed, failed, tc.want, tc.passed, tc.failed)
			}
		})
	}
}
