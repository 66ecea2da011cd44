// Package zonemap builds, reads and uses Lance ZoneMap scalar index
// segments (lance-table-format.md §3.3; Lance 12's zonemap.lance layout,
// restated in docs/index.md).
//
// A ZoneMap segment is one file, _indices/<uuid>/zonemap.lance, a Lance
// data file with one row per zone: min, max (the column's type), null_count
// and nan_count (UInt32), fragment_id, zone_start and zone_length (UInt64);
// its schema metadata holds rows_per_zone and, when null positions are
// known, null_bitmap, the index of a global buffer holding Lance's
// row-address tree map of the null rows. The manifest declares the segment
// with an IndexMetadata whose details are /lance.table.ZoneMapIndexDetails
// {rows_per_zone, use_seeds, has_null_bitmap}.
//
// Building: Create writes a segment over every fragment of the latest
// version and commits it as a CreateIndex transaction. For each fragment
// whose data file carries a usable zone write seed of the column with the
// index's rows_per_zone (v0 always, v1 only when the table sets
// FLAG_ZONE_WRITE_SEEDS, R61; a seed failing validation is never used,
// R63) the zones come from the seed and no data page is read; the others
// are read with datafile.(*File).ReadRows and zoned by the same collector
// that writes v1 seeds, so a segment built from seeds equals one built
// from data. Update adds a segment for the fragments appended since;
// List and Drop manage segments by name.
//
// Reading: ReadSegment decodes and validates a zonemap.lance file (any
// writer, Lance included); Segment.Prune answers, per zone, whether a
// predicate may match there, for the scan's zone pruning.
package zonemap
