package datafile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
)

func TestTmpDictDump(t *testing.T) {
	data, _ := os.ReadFile("/tmp/dict20.lance")
	f, err := OpenReaderAt(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < f.NumColumns(); i++ {
		c := f.Column(i)
		for _, p := range c.Pages {
			ae, err := decodeArrayEncoding(p.Encoding.Value, -1, "")
			fmt.Printf("col %d page: len %d -> %v %v\n", i, p.Length, ae, err)
			for j, b := range p.Buffers {
				fmt.Printf("   buf %d (%d bytes): % x\n", j, b.Len, data[b.Pos:b.Pos+min(b.Len, 80)])
			}
		}
	}
	_, err = f.ReadColumns(context.Background())
	fmt.Println("read:", err)
}
