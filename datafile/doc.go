// Package datafile reads and writes Lance v2 data files
// (shared/spec/lance-file-format.md).
//
// Reading: Open (over a gocloud.dev/blob bucket) and OpenReaderAt (over an
// io.ReaderAt) decode and check the container of 2.0, 2.1, 2.2 and 2.3
// files: the 40-byte footer, both offset tables, the FileDescriptor in global
// buffer 0 (schema with field ids, parent ids, logical types and metadata,
// and the row count) and every column's metadata, applying each check of
// spec §1.6. The footer and metadata are usually fetched with one range read
// of the file's tail. Legacy v1 files are recognised and refused with a
// *LegacyFileError; damaged input gives a *FormatError naming the section
// and file offset. Seeds lists the file's `lance.seed.<column>` locators and
// decodes the global buffers they name through seedio, reporting a broken
// seed on that seed only (R63). ReadColumns decodes 2.0 pages into Arrow
// arrays; 2.1+ pages are parsed only to the container level.
//
// Writing: Writer produces v2.0 files (footer 0.3) from Arrow record batches
// with the plain encodings of spec §4.5/§4.7 (flat, nullable, binary,
// fixed_size_list, struct), independent paging per column (§4.9) and the
// alignment and layout rules of §1.7, byte-compatible with Lance 12. It
// feeds every batch to seedio collectors for the chosen columns and embeds
// the finished seeds as extra global buffers with their locators in the
// file's schema metadata. Close returns what a manifest DataFile needs.
package datafile
