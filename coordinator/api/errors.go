package api

// Error codes of ErrorBody.Code, with the HTTP status each is sent with.
const (
	CodeBadRequest         = "bad_request"            // 400: malformed JSON, unknown field, missing operation
	CodeInvalidDatasetName = "invalid_dataset_name"   // 400: the name could escape the root (see ValidateDatasetName)
	CodeUnknownRoot        = "unknown_root"           // 400: no root of that name is configured
	CodeInvalidTransaction = "invalid_transaction"    // 400: the operation cannot apply (unknown fragment, schema or file-version mismatch, …)
	CodeDataFileNotFound   = "data_file_not_found"    // 400: a new data file does not exist under the dataset's data/ directory
	CodeSeedsNotEnabled    = "seeds_not_enabled"      // 400: new data files carry v1 seeds, the dataset lacks the flag and the request did not opt in
	CodeUnauthorized       = "unauthorized"           // 401: missing or wrong bearer token
	CodeNotFound           = "not_found"              // 404: no such endpoint, tag or version
	CodeDatasetNotFound    = "dataset_not_found"      // 404: the dataset has no version
	CodeMethodNotAllowed   = "method_not_allowed"     // 405
	CodeConflict           = "conflict"               // 409: a concurrent commit conflicts (see ErrorBody.Conflict)
	CodeRequirementFailed  = "requirement_failed"     // 409: a stated requirement no longer holds
	CodeTooManyRetries     = "too_many_retries"       // 409: every attempt lost the race; nothing was committed, retry later
	CodeDatasetExists      = "dataset_exists"         // 409: creating a dataset that exists
	CodeTagExists          = "tag_exists"             // 409
	CodeUnsupported        = "unsupported_dataset"    // 409: the dataset has feature flags this build must not write (or read)
	CodeBodyTooLarge       = "body_too_large"         // 413
	CodeUnsupportedMedia   = "unsupported_media_type" // 415: the body is not application/json
	CodeTooManyRequests    = "too_many_requests"      // 429: the dataset's queue is full; see Retry-After
	CodeCommitOutcome      = "commit_outcome_unknown" // 500: the manifest write may or may not have landed; do not resend blindly
	CodeInternal           = "internal"               // 500
	CodeStorage            = "storage_error"          // 502: the object store failed; nothing was committed
	CodeShuttingDown       = "shutting_down"          // 503: the server is draining; see Retry-After
	CodeTimeout            = "timeout"                // 504: the request's deadline passed before the commit started
)

// ErrorResponse is the body of every error response.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody says what went wrong.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Conflict details a "conflict" error.
	Conflict *ConflictInfo `json:"conflict,omitempty"`
	// Requirement details a "requirement_failed" error.
	Requirement *RequirementInfo `json:"requirement,omitempty"`
	// RetryAfterSeconds repeats the Retry-After header of 429 and 503.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
}

// ConflictInfo names the concurrent commit a transaction collided with.
type ConflictInfo struct {
	Operation           string `json:"operation"`
	ConcurrentOperation string `json:"concurrent_operation"`
	Version             uint64 `json:"version"`
	// Retryable: rebuilding the transaction on the newer version may
	// succeed; otherwise it never can.
	Retryable bool   `json:"retryable"`
	Reason    string `json:"reason,omitempty"`
}

// RequirementInfo says which requirement failed against which version.
type RequirementInfo struct {
	Requirement string `json:"requirement"`
	Latest      uint64 `json:"latest"`
	Detail      string `json:"detail,omitempty"`
}
