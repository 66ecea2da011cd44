//go:build linux

package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkSyncBatch measures the commit's sync batch — three new files
// (data file, transaction file, manifest; 1,200 bytes each, one per
// directory) fdatasynced and two directories fsynced, all at once — done
// the way the store does it (a goroutine per blocking call) against one
// io_uring submission that waits for all five (IORING_OP_FSYNC), in the
// same run. It reports wall time and the process's CPU (user + system;
// io_uring's kernel workers are threads of the process) per batch: the
// measured case for moving the store's syncs off goroutines
// (docs/benchmarks.md "commitio (session 24)"). The ring here is the
// least that works (no SQPOLL, one submitter); it is not used by the store.
func BenchmarkSyncBatch(b *testing.B) {
	for _, mode := range []string{"goroutines", "io_uring"} {
		b.Run(mode, func(b *testing.B) {
			root := b.TempDir()
			dirs := []string{"data", "_transactions", "_versions"}
			for _, d := range dirs {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					b.Fatal(err)
				}
			}
			var r *benchRing
			if mode == "io_uring" {
				var err error
				if r, err = newBenchRing(16); err != nil {
					b.Skipf("io_uring unavailable: %v", err)
				}
				defer r.close()
			}
			buf := make([]byte, 1200)
			var cpu time.Duration
			for i := 0; b.Loop(); i++ {
				var fds []int
				var data []bool
				for _, d := range dirs {
					fd, err := unix.Open(filepath.Join(root, d, fmt.Sprint(i)), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := unix.Write(fd, buf); err != nil {
						b.Fatal(err)
					}
					fds, data = append(fds, fd), append(data, true)
				}
				for _, d := range dirs[:2] {
					fd, err := unix.Open(filepath.Join(root, d), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
					if err != nil {
						b.Fatal(err)
					}
					fds, data = append(fds, fd), append(data, false)
				}
				c0 := processCPU()
				if r != nil {
					if err := r.syncAll(fds, data); err != nil {
						b.Fatal(err)
					}
				} else {
					var wg sync.WaitGroup
					errs := make([]error, len(fds))
					for j, fd := range fds {
						wg.Add(1)
						go func() {
							defer wg.Done()
							if data[j] {
								errs[j] = unix.Fdatasync(fd)
							} else {
								errs[j] = unix.Fsync(fd)
							}
						}()
					}
					wg.Wait()
					for _, err := range errs {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
				cpu += processCPU() - c0
				for _, fd := range fds {
					unix.Close(fd)
				}
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchRing is a minimal io_uring (io_uring_setup(2), the three mappings).
type benchRing struct {
	fd                      int
	maps                    [][]byte
	sqes                    []byte
	sqTail, sqMask, sqArray *uint32
	cqHead, cqTail, cqMask  *uint32
	cqes                    []byte // the CQE array (16 bytes each)
}

// ioUringParams is struct io_uring_params.
type ioUringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  [10]uint32 // head, tail, ring_mask, ring_entries, flags, dropped, array, resv1, user_addr (u64)
	cqOff                                                                  [10]uint32 // head, tail, ring_mask, ring_entries, overflow, cqes, flags, resv1, user_addr (u64)
}

func newBenchRing(entries uint32) (*benchRing, error) {
	var p ioUringParams
	fd, _, e := syscall.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, e
	}
	r := &benchRing{fd: int(fd)}
	mm := func(off int64, size int) ([]byte, error) {
		m, err := unix.Mmap(r.fd, off, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err == nil {
			r.maps = append(r.maps, m)
		}
		return m, err
	}
	sq, err := mm(0, int(p.sqOff[6]+p.sqEntries*4))
	if err != nil {
		r.close()
		return nil, err
	}
	cq, err := mm(0x8000000, int(p.cqOff[5]+p.cqEntries*16))
	if err != nil {
		r.close()
		return nil, err
	}
	if r.sqes, err = mm(0x10000000, int(p.sqEntries*64)); err != nil {
		r.close()
		return nil, err
	}
	at := func(m []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&m[off])) }
	r.sqTail, r.sqMask, r.sqArray = at(sq, p.sqOff[1]), at(sq, p.sqOff[2]), at(sq, p.sqOff[6])
	r.cqHead, r.cqTail, r.cqMask = at(cq, p.cqOff[0]), at(cq, p.cqOff[1]), at(cq, p.cqOff[2])
	r.cqes = cq[p.cqOff[5]:]
	return r, nil
}

func (r *benchRing) close() {
	for _, m := range r.maps {
		_ = unix.Munmap(m)
	}
	_ = unix.Close(r.fd)
}

// syncAll submits one IORING_OP_FSYNC per descriptor (IORING_FSYNC_DATASYNC
// where data[i]) and waits for every completion.
func (r *benchRing) syncAll(fds []int, data []bool) error {
	tail := atomic.LoadUint32(r.sqTail)
	mask := *r.sqMask
	array := unsafe.Slice(r.sqArray, mask+1)
	for i, fd := range fds {
		idx := (tail + uint32(i)) & mask
		sqe := r.sqes[idx*64 : idx*64+64]
		clear(sqe)
		sqe[0] = 3 // IORING_OP_FSYNC
		*(*int32)(unsafe.Pointer(&sqe[4])) = int32(fd)
		if data[i] {
			*(*uint32)(unsafe.Pointer(&sqe[28])) = 1 // IORING_FSYNC_DATASYNC
		}
		*(*uint64)(unsafe.Pointer(&sqe[32])) = uint64(i)
		array[idx] = idx
	}
	atomic.StoreUint32(r.sqTail, tail+uint32(len(fds)))
	submit := len(fds)
	for got := 0; got < len(fds); {
		_, _, e := syscall.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(submit), uintptr(len(fds)-got), 1 /* IORING_ENTER_GETEVENTS */, 0, 0)
		if e != 0 && e != syscall.EINTR {
			return e
		}
		if e == 0 {
			submit = 0
		}
		head, ctail := atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail)
		for ; head != ctail; head++ {
			c := r.cqes[(head&*r.cqMask)*16:]
			if res := *(*int32)(unsafe.Pointer(&c[8])); res < 0 {
				return fmt.Errorf("fsync of descriptor %d: %w", fds[*(*uint64)(unsafe.Pointer(&c[0]))], syscall.Errno(-res))
			}
			got++
		}
		atomic.StoreUint32(r.cqHead, head)
	}
	return nil
}
