//go:build !unix

package commit

import "time"

// processCPU is not available here; the CPU metrics read 0.
func processCPU() (user, sys time.Duration) { return 0, 0 }
