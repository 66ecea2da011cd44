package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/coordinator"
	coordclient "github.com/lancekeeper/lancekeeper/coordinator/client"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Shape of one benchmark round: benchWriters concurrent writers commit
// benchPerWriter appends each to a fresh dataset (so manifests stay small
// and every round measures the same thing).
const (
	benchWriters   = 32
	benchPerWriter = 4
)

// benchMode commits one round's fragments (frags[w] for writer w) and
// returns the number of versions it produced.
type benchMode struct {
	name string
	run  func(b *testing.B, dataset string, frags [][]*pb.DataFragment) int
}

// BenchmarkCommitThroughput compares, in one run, appends committed per
// second by 32 concurrent writers on one local dataset:
//
//   - library:     each writer calls commit.Commit directly (the baseline);
//   - library-1:   one writer commits the same appends one after another;
//   - coord:       through a coordinator on loopback, no batching (serial);
//   - coord-group: through the coordinator, batching allowed (group commit).
//
// Data files are written before the clock starts; every mode inspects
// them the same way (the coordinator and unmarked library commits open
// each new data file for its seeds). It reports commits/s per mode and
// the ratios coord/library and coord-group/library.
func BenchmarkCommitThroughput(b *testing.B) {
	ctx := context.Background()
	root := b.TempDir() + "/root"
	srv := startServer(b, root, coordinator.Config{})
	c := client(b, srv.URL)

	viaCoordinator := func(batch bool) func(b *testing.B, dataset string, frags [][]*pb.DataFragment) int {
		return func(b *testing.B, dataset string, frags [][]*pb.DataFragment) int {
			versions := map[uint64]bool{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, mine := range frags {
				wg.Add(1)
				go func() {
					defer wg.Done()
					read := uint64(1)
					for _, f := range mine {
						for {
							res, err := c.Append(ctx, dataset, read, []*pb.DataFragment{f}, coordclient.AppendOptions{AllowBatching: batch})
							if err == nil {
								read = max(read, res.Version)
								mu.Lock()
								versions[res.Version] = true
								mu.Unlock()
								break
							}
							if !errors.Is(err, commit.ErrRetryableConflict) && !errors.Is(err, coordclient.ErrBusy) {
								b.Error(err)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			return len(versions)
		}
	}
	library := func(b *testing.B, dataset string, frags [][]*pb.DataFragment) int {
		st := openStore(b, root+"/"+dataset)
		var n atomic.Int64
		var wg sync.WaitGroup
		for _, mine := range frags {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, f := range mine {
					for {
						info, err := manifest.LatestVersion(ctx, st.Bucket(), st.KeyPrefix())
						if err != nil {
							b.Error(err)
							return
						}
						_, err = commit.Commit(ctx, st, commit.NewAppend(info.Version, []*pb.DataFragment{f}), commit.Options{MaxRetries: 1000})
						if err == nil {
							n.Add(1)
							break
						}
						if !errors.Is(err, commit.ErrRetryableConflict) {
							b.Error(err)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		return int(n.Load())
	}
	librarySerial := func(b *testing.B, dataset string, frags [][]*pb.DataFragment) int {
		var all []*pb.DataFragment
		for _, mine := range frags {
			all = append(all, mine...)
		}
		return library(b, dataset, [][]*pb.DataFragment{all})
	}
	modes := []benchMode{
		{"library", library},
		{"library-1", librarySerial},
		{"coord", viaCoordinator(false)},
		{"coord-group", viaCoordinator(true)},
	}
	elapsed := make([]time.Duration, len(modes))
	versions := make([]int, len(modes))
	commits := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for m, mode := range modes {
			b.StopTimer()
			dataset := fmt.Sprintf("r%d-%s", i, mode.name)
			st := openStore(b, root+"/"+dataset)
			createDataset(b, st)
			frags := make([][]*pb.DataFragment, benchWriters)
			for w := range frags {
				for k := 0; k < benchPerWriter; k++ {
					f, err := writeDataFile(ctx, st, int64(k))
					if err != nil {
						b.Fatal(err)
					}
					frags[w] = append(frags[w], f)
				}
			}
			b.StartTimer()
			start := time.Now()
			versions[m] += mode.run(b, dataset, frags)
			elapsed[m] += time.Since(start)
		}
		commits += benchWriters * benchPerWriter
	}
	b.StopTimer()
	rate := func(m int) float64 { return float64(commits) / elapsed[m].Seconds() }
	for m, mode := range modes {
		b.ReportMetric(rate(m), mode.name+"-commits/s")
	}
	b.ReportMetric(rate(2)/rate(0), "coord/library")
	b.ReportMetric(rate(3)/rate(0), "coord-group/library")
	b.ReportMetric(rate(3)/rate(2), "coord-group/coord")
	b.ReportMetric(float64(commits)/float64(versions[3]), "group-appends/version")
}
