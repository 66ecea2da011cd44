//go:build !linux

package store

// uring: io_uring exists on Linux only; elsewhere the early syncs run on
// goroutines (newURing returns nil).
type uring struct{}

func newURing() *uring { return nil }

func (r *uring) close() {}

func (r *uring) submit(fd int, data bool, done func()) (*syncJob, bool) { return nil, false }

func (r *uring) wait(j *syncJob) error {
	<-j.done
	return j.err
}

func (s *Store) submitDirSync(r *uring, dir string) *syncJob { return nil }

func (s *Store) submitDatasync(r *uring, path string, f *rawFile) *syncJob { return nil }
