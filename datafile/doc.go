// Package datafile reads and writes Lance v2 data files
// (shared/spec/lance-file-format.md).
//
// Reading: Open (over a gocloud.dev/blob bucket) and OpenReaderAt (over an
// io.ReaderAt) decode and check the container of 2.0, 2.1, 2.2 and 2.3
// files: the 40-byte footer, both offset tables, the FileDescriptor in global
// buffer 0 (schema with field ids, parent ids, logical types and metadata,
// and the row count) and every column's metadata, applying each check of
// spec §1.6. The footer and metadata are usually fetched with one range read
// of the file's tail. Legacy v1 files are refused with a *LegacyFileError
// unless OpenOptions.LegacyFields is set (below); damaged input gives a *FormatError naming the section
// and file offset. Seeds lists the file's `lance.seed.<column>` locators and
// decodes the global buffers they name through seedio, reporting a broken
// seed on that seed only (R63).
//
// Decoding: ReadRows (fields and row ranges; only the pages, mini-block
// chunks and full-zip spans that hold the rows are read), ReadColumns and
// ReadColumn decode every version into arrow-go arrays: 2.0 pages (flat,
// nullable, binary, fixed_size_list, struct, list, dictionary); 2.1, 2.2 and
// 2.3 pages (lance-file-format-2.1.md: mini-block, full-zip, constant and
// all-null layouts, rep/def levels, page dictionaries, every compression
// through datafile/internal/codec) for every Arrow type Lance writes,
// including nested lists, structs with null parents, maps and fixed-size
// lists; legacy v1 files when OpenOptions.LegacyFields carries the table
// schema (Manifest.fields, with LegacyFieldIDs = DataFile.fields and
// LegacyManifest = the manifest file for dictionary values). Legacy blob
// pages and the 2.3 sparse layout are refused with a *FormatError
// (ErrUnsupported) naming file, column and page. ConformArray maps a read
// field onto the table's schema by field id. docs/datafile.md lists the
// details.
//
// Writing: Writer produces v2.0 files (footer 0.3) from Arrow record batches
// with the plain encodings of spec §4.5/§4.7 (flat, nullable, binary,
// fixed_size_list, struct), independent paging per column (§4.9) and the
// alignment and layout rules of §1.7, byte-compatible with Lance 12, and
// 2.1, 2.2 and 2.3 files (footer 2.n) with the structural encodings of
// lance-file-format-2.1.md §8; a 2.3 file holds 2.2's encodings (§2.5). It
// feeds every batch to seedio collectors for the chosen columns and embeds
// the finished seeds as extra global buffers with their locators in the
// file's schema metadata. Close returns what a manifest DataFile needs.
package datafile
