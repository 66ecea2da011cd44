package store

// The steps of the deferred durable write path (durable.go, earlysync.go)
// that a power loss can separate, as the test hook Store.steps sees them.
// A step's "before" call may fail it (a crash injected there); its "done"
// call comes only after it succeeded. The crash test
// (TestCrashSafety_NoManifestNamesAFileBeforeItIsDurable) models what each
// completed step made durable and checks, at every link, that the
// manifest names only durable files.
const (
	stepCreate     = "create"     // a file gets its name (O_EXCL create, or rename of a replacement)
	stepCreated    = "created"    // … and has it
	stepDatasync   = "datasync"   // fdatasync of a file (path: its name; a manifest: the name it will be linked to)
	stepDatasynced = "datasynced" // … returned: its content and size are durable
	stepDirsync    = "dirsync"    // fsync of a directory begins: it covers every entry made before
	stepDirsynced  = "dirsynced"  // … returned
	stepLink       = "link"       // the manifest is linked to its name (the commit point)
	stepLinked     = "linked"     // … and has it
)

// step reports step on path to the test hook (nil without one).
func (s *Store) step(step, path string) error { return s.stepN(step, path, 0) }

// stepN is step for one sync: id pairs its start and its end (syncs of
// one file or directory may overlap and end in any order).
func (s *Store) stepN(step, path string, id uint64) error {
	if s.steps == nil {
		return nil
	}
	return s.steps(step, path, id)
}

// newStepID numbers a sync for stepN (0 without a test hook).
func (s *Store) newStepID() uint64 {
	if s.steps == nil || s.syncs == nil {
		return 0
	}
	return s.syncs.stepSeq.Add(1)
}

// stepDone reports the completion of a sync unless err says it failed.
func (s *Store) stepDone(step, path string, id uint64, err error) error {
	if err != nil {
		return nil
	}
	return s.stepN(step, path, id)
}

// syncDirStep is syncDir with its steps.
func (s *Store) syncDirStep(dir string) error {
	id := s.newStepID()
	if err := s.stepN(stepDirsync, dir, id); err != nil {
		return err
	}
	err := syncDir(dir)
	if err != nil {
		return err
	}
	return s.stepN(stepDirsynced, dir, id)
}

// datasyncStep is f.Datasync (f is the file named path) with its steps.
func (s *Store) datasyncStep(path string, f *rawFile) error {
	id := s.newStepID()
	if err := s.stepN(stepDatasync, path, id); err != nil {
		return err
	}
	if err := f.Datasync(); err != nil {
		return err
	}
	return s.stepN(stepDatasynced, path, id)
}
