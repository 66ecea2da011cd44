package store

import "errors"

// Sentinel errors; every error returned by this package that falls into one
// of these classes wraps the sentinel, so callers test with errors.Is.
var (
	// ErrAlreadyExists: CreateIfAbsent found the key already present (the
	// caller lost the race, or the object was there before).
	ErrAlreadyExists = errors.New("object already exists")
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("object not found")
	// ErrInvalidKey: the key is not usable on every backend (see ValidateKey).
	ErrInvalidKey = errors.New("invalid key")
	// ErrInvalidURL: the store URL cannot be parsed or names an unknown scheme.
	ErrInvalidURL = errors.New("invalid store URL")
	// ErrNoAtomicCreate: the store cannot guarantee an atomic create-if-absent,
	// so it must not be used for commits unless the caller accepts the risk.
	ErrNoAtomicCreate = errors.New("store has no atomic create-if-absent")
	// ErrShortRead: a range read returned fewer bytes than requested (the
	// range extends past the end of the object).
	ErrShortRead = errors.New("short range read")
	// ErrSymlink: a local key's path goes through a symbolic link (see
	// CheckNoSymlinks).
	ErrSymlink = errors.New("path goes through a symbolic link")
	// ErrNotDurable: a create-if-absent linked the object to its name (it
	// exists and is visible) but the fsync that makes the name durable
	// failed, so a crash may still lose it.
	ErrNotDurable = errors.New("object created but not made durable")
	// ErrInvalidOptions: DoctorOptions out of range.
	ErrInvalidOptions = errors.New("invalid options")
)
