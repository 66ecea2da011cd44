// Package pb holds the protobuf messages of the Lance table layer
// (packages lance.table and lance.file), generated from the .proto files in
// this directory. The .proto files are our own, written from the field tables
// of shared/spec/lance-table-format.md §3.
//
// Regenerate with `go generate ./manifest/pb` (needs protoc from Debian's
// protobuf-compiler and protoc-gen-go v1.36.12:
// `go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12`).
package pb

//go:generate protoc -I . --go_out=. --go_opt=paths=source_relative file.proto table.proto rowids.proto transaction.proto
