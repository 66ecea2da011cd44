//go:build unix

package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestIdentityString_SameAsSprintf: the memo's identity of a local file
// (memo.go: device, inode, size, mtime, ctime) keeps its exact form when
// built without fmt, extremes included.
func TestIdentityString_SameAsSprintf(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 3))
	ext := []int64{0, 1, -1, 9, 10, 1<<63 - 1, -1 << 63}
	for i := range 5000 {
		var v [7]int64
		for j := range v {
			if i < len(ext)*7 {
				v[j] = ext[(i+j)%len(ext)]
			} else {
				v[j] = int64(r.Uint64())
			}
		}
		dev, ino := uint64(v[0]), uint64(v[1])
		want := fmt.Sprintf("%d/%d/%d/%d.%d/%d.%d", dev, ino, v[2], v[3], v[4], v[5], v[6])
		if got := identityString(dev, ino, v[2], v[3], v[4], v[5], v[6]); got != want {
			t.Fatalf("identityString = %q, want %q", got, want)
		}
	}
}
