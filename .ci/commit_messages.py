"""Commit messages since the rule was set: a subject of at most 72 characters and a body saying why.

A subject is what `git log --oneline`, GitHub and every review tool show; past 72 characters it is
cut. Run by .ci/run in the checkout (a clone of main, with its history); commits before the rule
(``SINCE``) are history and left as they are. A shallow clone without ``SINCE`` checks nothing.
"""

from __future__ import annotations

import subprocess
import sys

SINCE = "f973c7c"  # the last commit before the rule
MAX_SUBJECT = 72
# Landed while this check was being written; history is not rewritten for it.
EXEMPT = frozenset({"9ae901d"})


def main() -> int:
    known = subprocess.run(["git", "rev-parse", "-q", "--verify", f"{SINCE}^{{commit}}"],
                           capture_output=True, text=True, check=False)
    if known.returncode != 0:
        print(f"ci: commit {SINCE} is not in this clone; commit messages not checked")
        return 0
    log = subprocess.run(["git", "log", "--no-merges", "--format=%h%x00%s%x00%b%x1e", f"{SINCE}..HEAD"],
                         capture_output=True, text=True, check=True).stdout
    problems = []
    for record in filter(None, (r.strip("\n") for r in log.split("\x1e"))):
        commit, subject, body = record.split("\x00")
        if commit[:7] in EXEMPT:
            continue
        if len(subject) > MAX_SUBJECT:
            problems.append(f"{commit}: subject is {len(subject)} characters (at most {MAX_SUBJECT}): {subject}")
        if not body.strip():
            problems.append(f"{commit}: no body saying why: {subject}")
    for problem in problems:
        print(f"ci: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
