package main

import (
	"strings"
	"testing"
)

// Tests of compact, cleanup, seeds backfill and branch delete (issue 14).

// TestCLI_CompactCleanupBackfillBranchDelete walks a copy of Lance 12's
// tags dataset through the maintenance commands: compact (a Rewrite
// version), cleanup refusing the tagged old versions with Lance's message
// and succeeding with --keep-tagged, seeds backfill refused without the
// activation and done with it, branch delete; bad input exits 2.
func TestCLI_CompactCleanupBackfillBranchDelete(t *testing.T) {
	ds := exampleCopy(t)
	code, out, errs := runCLI(t, "compact", ds, "--json")
	if code != exitOK {
		t.Fatalf("compact: exit %d: %s", code, errs)
	}
	var c compactJSON
	mustJSON(t, out, &c)
	if c.Version == 0 || c.FragmentsAdded != 1 {
		t.Fatalf("compact: %+v", c)
	}
	code, _, errs = runCLI(t, "cleanup", ds, "--older-than", "0s")
	if code != exitBadInput || !strings.Contains(errs, "tagged version(s) have been marked for cleanup") {
		t.Fatalf("cleanup with tagged old versions: exit %d: %s", code, errs)
	}
	code, out, errs = runCLI(t, "cleanup", ds, "--older-than", "0s", "--keep-tagged", "--dry-run")
	if code != exitOK || !strings.Contains(out, "would remove") {
		t.Fatalf("cleanup --dry-run: exit %d: %s %s", code, out, errs)
	}
	code, out, errs = runCLI(t, "cleanup", ds, "--older-than", "0s", "--keep-tagged", "--json")
	if code != exitOK || !strings.Contains(out, `"removed_versions"`) {
		t.Fatalf("cleanup: exit %d: %s %s", code, out, errs)
	}
	if code, _, _ = runCLI(t, "inspect", ds, "--tag", "first"); code != exitOK {
		t.Fatalf("tag first lost after cleanup: exit %d", code)
	}
	if code, _, errs = runCLI(t, "seeds", "backfill", ds); code != exitBadInput {
		t.Fatalf("backfill without activation: exit %d: %s", code, errs)
	}
	if code, out, errs = runCLI(t, "seeds", "backfill", ds, "--enable-zone-write-seeds", "--json"); code != exitOK || !strings.Contains(out, `"fragments_rewritten": 1`) {
		t.Fatalf("backfill: exit %d: %s %s", code, out, errs)
	}
	if code, _, errs = runCLI(t, "branch", "create", ds, "b1"); code != exitOK {
		t.Fatalf("branch create: exit %d: %s", code, errs)
	}
	if code, _, errs = runCLI(t, "branch", "delete", ds, "b1"); code != exitOK {
		t.Fatalf("branch delete: exit %d: %s", code, errs)
	}
	if code, _, _ = runCLI(t, "branch", "delete", ds, "b1"); code != exitBadInput {
		t.Fatalf("deleting a deleted branch: exit %d", code)
	}
	if code, _, _ = runCLI(t, "cleanup", ds); code != exitBadInput {
		t.Fatalf("cleanup without a policy: exit %d", code)
	}
	if code, _, _ = runCLI(t, "cleanup", ds, "--older-than", "3 fortnights"); code != exitBadInput {
		t.Fatalf("cleanup with a bad duration: exit %d", code)
	}
}
