//go:build !unix

package scan

import "time"

// cpuTime is not measured on this platform (cpu_us/op reads 0).
func cpuTime() time.Duration { return 0 }
