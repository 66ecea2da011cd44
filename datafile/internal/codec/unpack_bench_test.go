package codec

import "testing"

func BenchmarkKernelUnpack64W22(b *testing.B) {
	in := make([]uint64, 1024)
	for i := range in {
		in[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	out := make([]uint64, 1024)
	b.SetBytes(8192)
	for i := 0; i < b.N; i++ {
		unpackBlock(in, out, 22)
	}
}
