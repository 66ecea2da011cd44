// lockcheck.mjs COMMITTED_LOCK INSTALLED_HIDDEN_LOCK
// Fails unless every package npm installed (node_modules/.package-lock.json)
// appears in the committed package-lock.json with the same version and
// integrity, and every non-optional package of the committed lock is installed.
import { readFileSync } from "node:fs";

const [committedPath, installedPath] = process.argv.slice(2);
const committed = JSON.parse(readFileSync(committedPath, "utf8")).packages;
const installed = JSON.parse(readFileSync(installedPath, "utf8")).packages;
const problems = [];
for (const [path, pkg] of Object.entries(installed)) {
  if (path === "") continue;
  const want = committed[path];
  if (!want) {
    problems.push(`${path}: installed ${pkg.version} but not in the committed lock`);
  } else if (want.version !== pkg.version || want.integrity !== pkg.integrity) {
    problems.push(`${path}: installed ${pkg.version} (${pkg.integrity}), lock pins ${want.version} (${want.integrity})`);
  }
}
for (const [path, pkg] of Object.entries(committed)) {
  if (path === "" || pkg.optional || pkg.peer || pkg.dev) continue;
  if (!installed[path]) problems.push(`${path}: pinned ${pkg.version} but not installed`);
}
if (problems.length > 0) {
  process.stderr.write(`lockcheck: installed packages differ from package-lock.json:\n  ${problems.join("\n  ")}\n`);
  process.exit(1);
}
process.stderr.write(`lockcheck: ${Object.keys(installed).length - 1} installed packages match package-lock.json\n`);
