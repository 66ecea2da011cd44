package commit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// benchRound is the number of commits per fresh dataset, so manifests stay
// small and every round measures the same thing.
const benchRound = 64

func benchStore(b *testing.B, backend string) *store.Store {
	b.Helper()
	var st *store.Store
	var err error
	if backend == "mem" {
		st, err = store.Open(context.Background(), "mem://bench")
	} else {
		st, err = store.Open(context.Background(), b.TempDir()+"/ds")
	}
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkCommit measures appends committed per second by 1, 4 and 8
// concurrent writers (goroutines, each its own commit loop) on the local
// filesystem and on mem://. One op is one committed version. The baseline
// in the same run is BenchmarkCommit/*/baseline-create: a bare
// create-if-absent of a manifest-sized object, the floor of one commit.
func BenchmarkCommit(b *testing.B) {
	for _, backend := range []string{"mem", "local"} {
		b.Run(backend+"/baseline-create", func(b *testing.B) {
			st := benchStore(b, backend)
			defer st.Close()
			r := mustCreate(b, st, fakeFrag("a", 1))
			data, err := manifest.Encode(r.Manifest, nil, r.Transaction)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := st.CreateIfAbsent(context.Background(), fmt.Sprintf("_bench/%d", i), data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
		})
		for _, writers := range []int{1, 4, 8} {
			b.Run(fmt.Sprintf("%s/writers=%d", backend, writers), func(b *testing.B) {
				ctx := context.Background()
				var attempts atomic.Int64
				done := 0
				b.ResetTimer()
				for done < b.N {
					b.StopTimer()
					st := benchStore(b, backend)
					mustCreate(b, st, fakeFrag("seed", 1))
					n := min(benchRound, b.N-done)
					var next atomic.Int64
					b.StartTimer()
					var wg sync.WaitGroup
					for w := 0; w < writers; w++ {
						wg.Add(1)
						go func(w int) {
							defer wg.Done()
							for {
								i := next.Add(1)
								if i > int64(n) {
									return
								}
								for {
									info, err := manifest.LatestVersion(ctx, st.Bucket(), st.KeyPrefix())
									if err != nil {
										b.Error(err)
										return
									}
									txn := NewAppend(info.Version, []*pb.DataFragment{fakeFrag(fmt.Sprintf("w%d-%d", w, i), 1)})
									txn.MarkSeedFiles(false, fmt.Sprintf("w%d-%d.lance", w, i))
									r, err := Commit(ctx, st, txn, Options{MaxRetries: 1000})
									if err == nil {
										attempts.Add(int64(r.Attempts))
										break
									}
									b.Error(err)
									return
								}
							}
						}(w)
					}
					wg.Wait()
					b.StopTimer()
					st.Close()
					done += n
					b.StartTimer()
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
				b.ReportMetric(float64(attempts.Load())/float64(b.N), "attempts/commit")
			})
		}
	}
}
