//go:build !unix

package datafile

import "time"

// processCPU is not available here; the CPU overhead metric reads 0.
func processCPU() time.Duration { return 0 }
