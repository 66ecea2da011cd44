package inspect

import (
	"context"
	"testing"

	"github.com/lancekeeper/lancekeeper/store"
)

// FuzzLegacyNumRows feeds hostile bytes to the legacy v1 data-file footer
// reader: it must return a row count or an error, never panic.
func FuzzLegacyNumRows(f *testing.F) {
	f.Add(legacyFile([]int32{0, 40, 100}, true))
	f.Add(legacyFile([]int32{0, 7}, false))
	f.Add([]byte("LANC"))
	ctx := context.Background()
	st, err := store.Open(ctx, "mem://")
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := st.Put(ctx, "data/x.lance", data); err != nil {
			t.Fatal(err)
		}
		if _, err := legacyNumRows(ctx, st, "data/x.lance"); err != nil {
			return
		}
	})
}
