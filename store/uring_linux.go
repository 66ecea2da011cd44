//go:build linux

package store

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// An io_uring for the early syncs of deferred writes (session 24). A
// goroutine per blocking fsync costs the Go runtime more than the fsync's
// own system call on 2 cores: while one sits in the kernel and the other P
// runs, sysmon wakes every 20 µs and retakes the P each time (13 % of an
// append's CPU, docs/benchmarks.md "commitio (session 24)"). Here an
// fsync is one submission (IORING_OP_FSYNC; the kernel runs it on its
// io-wq workers, threads of this process) that returns at once, and the
// waiter that needs it collects the completions: no goroutine, no handoff.
// BenchmarkSyncBatch measured a batch of five syncs at 0.55–0.83× the wall
// time and 0.7–1.0× the CPU of the goroutines.
//
// One ring per store table (shared by Sub copies). Submissions take mu;
// completions are collected by one waiter at a time (the reaper token),
// which blocks in io_uring_enter only while a job of its own is pending
// (so a completion always comes) and hands each completion to its job.
// Other waiters wait for their job or for the reaper to finish its round.

// uring is a minimal io_uring: the submission and completion rings.
type uring struct {
	fd   int
	maps [][]byte
	sqes []byte

	sqTail, sqMask, sqArray *uint32
	cqHead, cqTail, cqMask  *uint32
	cqes                    []byte

	mu       sync.Mutex // submissions, jobs, closed, released
	jobs     map[uint64]*ringJob
	nextID   uint64
	closed   bool // no more submissions
	released bool // close ran (the descriptor and mappings go once)

	reap  sync.Mutex    // the reaper token
	round chan struct{} // closed when the current reaper's round ends (under mu)
}

// ringJob is a submitted fsync.
type ringJob struct {
	job  *syncJob
	fd   int    // closed once the fsync completed
	done func() // then called (a step report), unless nil
}

// ioUringParams is struct io_uring_params.
type ioUringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  [10]uint32 // head, tail, ring_mask, ring_entries, flags, dropped, array, resv1, user_addr (u64)
	cqOff                                                                  [10]uint32 // head, tail, ring_mask, ring_entries, overflow, cqes, flags, resv1, user_addr (u64)
}

const (
	ioringOpFsync       = 3
	ioringFsyncDatasync = 1
	ioringEnterGetevent = 1
	ioringFeatNodrop    = 1 << 1
	ringEntries         = 64
)

// newURing sets up a ring, or returns nil where io_uring is unavailable
// (old kernel, seccomp, io_uring_disabled) or cannot keep completions that
// overflow (IORING_FEAT_NODROP, Linux 5.5): the caller then uses goroutines.
func newURing() *uring {
	var p ioUringParams
	fd, _, e := syscall.Syscall(unix.SYS_IO_URING_SETUP, ringEntries, uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil
	}
	r := &uring{fd: int(fd), jobs: map[uint64]*ringJob{}, round: make(chan struct{})}
	if p.features&ioringFeatNodrop == 0 {
		r.close()
		return nil
	}
	mm := func(off int64, size int) []byte {
		m, err := unix.Mmap(r.fd, off, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return nil
		}
		r.maps = append(r.maps, m)
		return m
	}
	sq := mm(0, int(p.sqOff[6]+p.sqEntries*4))
	cq := mm(0x8000000, int(p.cqOff[5]+p.cqEntries*16))
	r.sqes = mm(0x10000000, int(p.sqEntries*64))
	if sq == nil || cq == nil || r.sqes == nil {
		r.close()
		return nil
	}
	at := func(m []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&m[off])) }
	r.sqTail, r.sqMask, r.sqArray = at(sq, p.sqOff[1]), at(sq, p.sqOff[2]), at(sq, p.sqOff[6])
	r.cqHead, r.cqTail, r.cqMask = at(cq, p.cqOff[0]), at(cq, p.cqOff[1]), at(cq, p.cqOff[2])
	r.cqes = cq[p.cqOff[5]:]
	return r
}

// close releases the ring after every submitted fsync completed (their
// descriptors are closed). Called when the store table is unreachable or
// the store closes.
func (r *uring) close() {
	r.mu.Lock()
	if r.released {
		r.mu.Unlock()
		return
	}
	r.released = true
	r.closed = true
	var pending []*syncJob
	for _, j := range r.jobs {
		pending = append(pending, j.job)
	}
	r.mu.Unlock()
	for _, j := range pending {
		_ = r.wait(j)
	}
	for _, m := range r.maps {
		_ = unix.Munmap(m)
	}
	_ = unix.Close(r.fd)
}

// submit starts an fsync of fd (fdatasync when data) that closes fd when
// it completes, then calls done (unless nil) if it succeeded. The job
// completes through wait. ok is false when the ring is closed or the
// submission failed: the caller then syncs fd itself.
func (r *uring) submit(fd int, data bool, done func()) (job *syncJob, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, false
	}
	tail := atomic.LoadUint32(r.sqTail)
	mask := *r.sqMask
	idx := tail & mask
	sqe := r.sqes[idx*64 : idx*64+64]
	clear(sqe)
	sqe[0] = ioringOpFsync
	*(*int32)(unsafe.Pointer(&sqe[4])) = int32(fd)
	if data {
		*(*uint32)(unsafe.Pointer(&sqe[28])) = ioringFsyncDatasync
	}
	r.nextID++
	id := r.nextID
	*(*uint64)(unsafe.Pointer(&sqe[32])) = id
	unsafe.Slice(r.sqArray, mask+1)[idx] = idx
	atomic.StoreUint32(r.sqTail, tail+1)
	for {
		n, _, e := syscall.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 1, 0, 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 || n != 1 {
			// Not taken: undo (the kernel did not consume the entry).
			atomic.StoreUint32(r.sqTail, tail)
			return nil, false
		}
		break
	}
	job = &syncJob{done: make(chan struct{}), ring: r}
	r.jobs[id] = &ringJob{job: job, fd: fd, done: done}
	return job, true
}

// wait returns once j completed, collecting completions as the reaper
// when no one else does.
func (r *uring) wait(j *syncJob) error {
	for {
		select {
		case <-j.done:
			return j.err
		default:
		}
		if r.reap.TryLock() {
			r.reapRound(j)
			continue
		}
		r.mu.Lock()
		round := r.round
		r.mu.Unlock()
		select {
		case <-j.done:
			return j.err
		case <-round:
		}
	}
}

// reapRound (holding the reaper token) collects completions until j is
// done, handing each to its job, then ends the round.
func (r *uring) reapRound(j *syncJob) {
	defer func() {
		r.mu.Lock()
		close(r.round)
		r.round = make(chan struct{})
		r.mu.Unlock()
		r.reap.Unlock()
	}()
	for {
		if r.collect() {
			select {
			case <-j.done:
				return
			default:
			}
		}
		select {
		case <-j.done:
			return
		default:
		}
		// j is pending and only the reaper collects: a completion
		// will come.
		_, _, e := syscall.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 0, 1, ioringEnterGetevent, 0, 0)
		if e != 0 && e != syscall.EINTR {
			r.failAll(fmt.Errorf("io_uring_enter: %w", e))
			return
		}
	}
}

// collect hands the completions in the ring to their jobs; it reports
// whether there were any.
func (r *uring) collect() bool {
	r.mu.Lock()
	head, tail := atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail)
	var done []*ringJob
	var errs []error
	for ; head != tail; head++ {
		c := r.cqes[(head&*r.cqMask)*16:]
		id := *(*uint64)(unsafe.Pointer(&c[0]))
		res := *(*int32)(unsafe.Pointer(&c[8]))
		rj := r.jobs[id]
		delete(r.jobs, id)
		if rj == nil {
			continue
		}
		var err error
		if res < 0 {
			err = syscall.Errno(-res)
		}
		done, errs = append(done, rj), append(errs, err)
	}
	atomic.StoreUint32(r.cqHead, head)
	r.mu.Unlock()
	for i, rj := range done {
		err := errs[i]
		if cerr := unix.Close(rj.fd); err == nil && cerr != nil {
			err = cerr
		}
		if err == nil && rj.done != nil {
			rj.done()
		}
		rj.job.err = err
		close(rj.job.done)
	}
	return len(done) > 0
}

// failAll fails every pending job (the ring broke): their files are not
// known durable, so every commit waiting for them fails.
func (r *uring) failAll(err error) {
	r.mu.Lock()
	jobs := r.jobs
	r.jobs = map[uint64]*ringJob{}
	r.closed = true
	r.mu.Unlock()
	for _, rj := range jobs {
		_ = unix.Close(rj.fd)
		rj.job.err = err
		close(rj.job.done)
	}
}

// submitDirSync submits the fsync of the directory dir to r (the step is
// reported as the goroutine path reports it). When r does not take it,
// the fsync is done here and now.
func (s *Store) submitDirSync(r *uring, dir string) *syncJob {
	id := s.newStepID()
	if err := s.stepN(stepDirsync, dir, id); err != nil {
		return doneJob(err)
	}
	f, err := openRaw(dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return doneJob(fmt.Errorf("fsync directory %s: %w", dir, err))
	}
	if job, ok := r.submit(f.fd, false, func() { _ = s.stepN(stepDirsynced, dir, id) }); ok {
		return job
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.stepN(stepDirsynced, dir, id)
	}
	if err != nil {
		return doneJob(fmt.Errorf("fsync directory %s: %w", dir, err))
	}
	return doneJob(nil)
}

// submitDatasync submits the fdatasync of f (the file at path, written)
// to r, which closes f once it completed. When r does not take it, the
// fdatasync is done here and now.
func (s *Store) submitDatasync(r *uring, path string, f *rawFile) *syncJob {
	id := s.newStepID()
	if err := s.stepN(stepDatasync, path, id); err != nil {
		_ = f.Close()
		return doneJob(err)
	}
	if job, ok := r.submit(f.fd, true, func() { _ = s.stepN(stepDatasynced, path, id) }); ok {
		return job
	}
	err := f.Datasync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.stepN(stepDatasynced, path, id)
	}
	return doneJob(err)
}
