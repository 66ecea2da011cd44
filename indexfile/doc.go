// Package indexfile reads what the table layer needs from Lance index
// payload files: the footer version of a vector index's index.idx and, for
// the legacy (footer 0.0/0.1) vector index format, the row ids of every
// IVF partition, from which an index's fragment bitmap is recomputed the
// way Lance's commit does for old writers (lance-table-format.md §5.2 e,
// docs/maintenance.md "Index fragment bitmaps").
//
// The legacy format, as Lance 12 reads it: the file ends with a 16-byte
// footer (u64 metadata position, u16 major, u16 minor, "LANC"); at the
// metadata position a u32 length and a lance.index.pb.Index protobuf whose
// VectorIndex stages describe the index. Of those, Lance can only work
// out the fragments of an IVF stage over a PQ stage (IVF_PQ; transform and
// flat stages before them are ignored): the IVF stage gives each
// partition's byte offset and row count, and a partition holds that many
// PQ codes (num_sub_vectors bytes each) followed by as many little-endian
// u64 row ids. The fragment of a row id is its upper 32 bits.
//
// Every length and offset is checked against the file before anything is
// allocated or read; errors wrap ErrCorrupt (bytes that are not a valid
// index file) or ErrUnsupported (an index Lance 12 itself cannot
// recompute a bitmap for); nothing panics.
package indexfile
