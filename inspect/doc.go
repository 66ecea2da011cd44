// Package inspect summarizes one version of a Lance dataset: naming scheme,
// feature flags (and which bits a reader or writer would refuse), writer
// version, data format, fragments, physical and live row counts, the schema
// as a tree with Arrow type names, indices and tags. It reads manifests
// without applying the flag refusal, so a dataset this build cannot open
// can still be inspected. The `lancekeeper inspect` and `versions`
// commands print its results; the JSON form is a stable contract
// documented in docs/cli.md.
package inspect
