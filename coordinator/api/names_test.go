package api

import (
	"errors"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/store"
)

func TestValidateDatasetName(t *testing.T) {
	for _, ok := range []string{"a", "events.lance", "team/events", "A-1/b_2.lance", "x.y.z", "1/2/3/4/5/6/7/8", strings.Repeat("a", MaxDatasetNameLen)} {
		if err := ValidateDatasetName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../a", "a/..", "a/../b", "a..", "a../b", "/a", "a/", "a//b", "s3://b", "C:", `a\b`, "a\x00b",
		"%2e%2e", "a%2Fb", ".hidden", "_versions", "a/_refs", "-x", "a b", "é", "1/2/3/4/5/6/7/8/9", strings.Repeat("a", MaxDatasetNameLen+1)} {
		if err := ValidateDatasetName(bad); !errors.Is(err, ErrInvalidDatasetName) {
			t.Errorf("%q accepted (%v)", bad, err)
		}
	}
}

// FuzzValidateDatasetName: an accepted name is a valid store key and
// cannot leave its root however a later layer treats it.
func FuzzValidateDatasetName(f *testing.F) {
	for _, s := range []string{"a", "a/b", "..", "%2e%2e", "a/../b", `a\b`, "s3://x", "a..", "a.b/c-d_e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateDatasetName(name) != nil {
			return
		}
		if err := store.ValidateKey(name); err != nil {
			t.Fatalf("accepted %q is not a store key: %v", name, err)
		}
		for _, bad := range []string{"../", "%", ":", `\`, "//", "\x00"} {
			if strings.Contains(name+"/", bad) {
				t.Fatalf("accepted %q contains %q", name, bad)
			}
		}
		for _, seg := range strings.Split(name, "/") {
			if seg == "." || seg == ".." || seg == "" {
				t.Fatalf("accepted %q has segment %q", name, seg)
			}
		}
		if strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.HasPrefix(name, ".") {
			t.Fatalf("accepted %q", name)
		}
	})
}
