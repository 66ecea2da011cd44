package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/tests/peerlance"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
)

func TestMain(m *testing.M) {
	if os.Getenv(envWorker) == "1" {
		if err := serveWorker(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSmoke runs every workload once at its -short size, so the harness and
// each workload keep working; the figures are not looked at. Workloads
// compared with Lance 12 need the peer (the test skips loudly without node,
// and fails under LANCEKEEPER_REQUIRE_PEER=1, as the other peer tests do).
func TestSmoke(t *testing.T) {
	peerlance.ForTest(t)
	var log strings.Builder
	opts := Options{Short: true, Rounds: 1, Log: &log, Cache: t.TempDir()}
	if _, err := s3util.Binary(); err != nil && os.Getenv(s3util.EnvRequire) != "1" {
		// The requests/ workloads need SeaweedFS (tests/s3/seaweed.sh);
		// CI builds it and sets LANCEKEEPER_REQUIRE_S3=1.
		t.Logf("weed binary missing (%v): the requests/ workloads are left out", err)
		var names []string
		for _, w := range registry {
			if !strings.HasPrefix(w.Name, "requests/") {
				names = append(names, regexp.QuoteMeta(w.Name))
			}
		}
		opts.Only = regexp.MustCompile("^(" + strings.Join(names, "|") + ")$")
	}
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 {
		t.Fatal("no workload registered")
	}
	for _, r := range res {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Name, r.Err)
			continue
		}
		if len(r.Ours) != 1 || r.OursPerOp <= 0 {
			t.Errorf("%s: ours measured nothing: %+v", r.Name, r.Ours)
		}
		if len(r.BaseSide) != 1 || r.BasePerOp <= 0 {
			t.Errorf("%s: baseline measured nothing: %+v", r.Name, r.BaseSide)
		}
	}
	if t.Failed() {
		t.Log(log.String())
	}
}
