// Package api is the wire protocol of the lancekeeper commit
// coordinator (`lancekeeper serve`): the JSON request and response bodies,
// the endpoint paths, the error codes, and the dataset-name rule that keeps
// every dataset inside a configured root. It has no behaviour beyond
// validation, so that the server (package coordinator) and the client
// (package coordclient) share it without depending on each other.
//
// Protobuf messages that travel inside the JSON (data fragments, schema
// fields, index metadata) are encoded with protojson using the .proto field
// names, so uint64 fields are JSON strings. docs/coordinator.md and
// docs/coordinator.openapi.yaml describe the protocol for non-Go clients.
//
// The package exports more than 60 names because it is a protocol
// definition: 24 error codes (Code…) and 9 endpoint paths (Path…) are
// constants of the wire format, one per code and path docs/coordinator.md
// lists; the rest (bodies, operations, name rules) is about 37 names.
package api
