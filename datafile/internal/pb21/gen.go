// Package pb21 holds the protobuf messages of Lance 2.1+ page layouts
// (package lance.encodings21), generated from encodings21.proto, our own
// description written from shared/spec/lance-file-format-2.1.md §2.
//
// Regenerate with `go generate ./datafile/internal/pb21` (needs protoc from
// Debian's protobuf-compiler and protoc-gen-go v1.36.12:
// `go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12`).
package pb21

//go:generate protoc -I . --go_out=. --go_opt=paths=source_relative encodings21.proto
