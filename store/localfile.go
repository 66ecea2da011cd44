package store

import "os"

// OpenLocalFile opens the object key of a local store for positional
// reads (os.File.ReadAt: one pread per range, where a bucket range read
// opens, seeks, reads and closes the file). It returns (nil, nil) for
// stores of other kinds. The caller closes the file.
func (s *Store) OpenLocalFile(key string) (*os.File, error) {
	if s.kind != KindLocal {
		return nil, nil
	}
	return os.Open(s.localPath(key))
}
