package render

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/piagent/piagent/internal/ops"
)

// Quarantine shows one quarantine: what a session changed, what was put
// back, and the commands that settle it; its files are in dir.
func Quarantine(w io.Writer, q *ops.Quarantine, dir string) {
	state := "unexamined: piagent pi will not start Pi in this project until you accept or discard it"
	if q.Examined != "" {
		state = q.Examined
	}
	fmt.Fprintf(w, "quarantine %s\n  project: %s\n  when:    %s, %s\n  state:   %s\n  files:   %s\n", q.ID, q.Project,
		q.When.Local().Format("2006-01-02 15:04:05"), q.Source, state, filepath.Join(dir, "files"))
	for _, k := range q.Changes {
		what := map[string]string{"added": "appeared", "removed": "was removed", "changed": "changed"}[k.Change]
		fmt.Fprintf(w, "  %s %s", k.Path, what)
		switch {
		case k.Kept && k.Restored && k.Change == "added":
			fmt.Fprint(w, "; moved to the quarantine")
		case k.Kept && k.Restored:
			fmt.Fprint(w, "; what was there is in the quarantine, the version from the session's start is back")
		case k.Restored:
			fmt.Fprint(w, "; the version from the session's start is back")
		case k.Kept:
			fmt.Fprint(w, "; what was there is in the quarantine, but the older version could not be put back")
		default:
			fmt.Fprint(w, "; left as it is")
		}
		if k.Note != "" {
			fmt.Fprintf(w, " (%s)", k.Note)
		}
		fmt.Fprintln(w)
	}
	if q.Examined == "" {
		fmt.Fprintf(w, "if the change was yours: piagent quarantine accept %s\nif not:                 piagent quarantine discard %s\n", q.ID, q.ID)
	}
}
