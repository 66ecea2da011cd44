//go:build !unix

package main

import "time"

// processCPU is not measured on this platform.
func processCPU() time.Duration { return 0 }

// processCPUSplit is not measured on this platform.
func processCPUSplit() (user, sys time.Duration) { return 0, 0 }
