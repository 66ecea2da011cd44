package coordinator_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/coordinator"
)

// TestLoad_32Clients: 32 concurrent clients × 200 appends each (override
// with LANCEKEEPER_LOAD_CLIENTS and LANCEKEEPER_LOAD_APPENDS; -short runs
// 32 × 20) through one coordinator on loopback, every client writing its
// data files itself and allowing group commit. Every acknowledged commit
// is present exactly once, versions are contiguous, nothing is lost.
func TestLoad_32Clients(t *testing.T) {
	clients := envInt("LANCEKEEPER_LOAD_CLIENTS", 32)
	appends := envInt("LANCEKEEPER_LOAD_APPENDS", 200)
	if testing.Short() {
		appends = min(appends, 20)
	}
	ctx := context.Background()
	root := t.TempDir() + "/root"
	srv := startServer(t, root, coordinator.Config{})
	ds := openStore(t, root+"/load")
	createDataset(t, ds)
	c := client(t, srv.URL)

	l := newLedger()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			read := uint64(1)
			for i := 0; i < appends; i++ {
				if err := appendViaCoordinator(ctx, c, ds, "load", int64(i), true, &read, l); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(l.fails) > 0 {
		t.Fatalf("%d of %d appends failed; first: %s", len(l.fails), clients*appends, l.fails[0])
	}
	if len(l.acks) != clients*appends {
		t.Fatalf("%d acks, want %d", len(l.acks), clients*appends)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	versions := verify(t, ds, l, 1)
	batches := metric(t, srv.Server, "lancekeeper_coordinator_batch_size", true)
	t.Logf("%d clients × %d appends: %d acknowledged in %d versions (mean batch %.1f) in %v: %.0f appends/s (data file write + commit)",
		clients, appends, len(l.acks), versions, float64(len(l.acks))/batches, elapsed.Round(time.Millisecond), float64(len(l.acks))/elapsed.Seconds())
}
