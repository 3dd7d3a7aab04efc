package engine

import (
	"path/filepath"
	"time"

	"github.com/piagent/piagent/internal/gitnest"
	"github.com/piagent/piagent/internal/safefile"
)

// nested looks after the repositories nested in the project that git
// enters from it (package gitnest): after a command records one as a
// gitlink, the person's next git status in the project runs git inside it,
// with its config. A risky setting there that changed during the session
// is moved to the quarantine and trips the watch (gitnest.Changed); a
// nested repository the person had before is theirs. The index is read
// again only when its stamp changes.
type nested struct {
	project string
	gitDir  string
	since   time.Time
	// the index last read (its stamp: a racy one holds the content's
	// digest, so a same-tick rewrite is seen), and its gitlinks
	stamp      safefile.Stamp
	links      []string
	unreadable string
}

func newNested(project string, since time.Time) *nested {
	return &nested{project: project, gitDir: gitnest.GitDir(project), since: since}
}

// risks lists what changed during the session in the repositories the
// index's gitlinks name, or why the index cannot be read.
func (n *nested) risks() ([]gitnest.Risk, string) {
	if n.gitDir == "" {
		return nil, ""
	}
	st := safefile.StampOf(filepath.Join(n.gitDir, "index"))
	if !st.Exists {
		n.stamp, n.links, n.unreadable = st, nil, ""
		return nil, ""
	}
	if st != n.stamp {
		n.stamp, n.unreadable = st, ""
		links, err := gitnest.Links(n.gitDir)
		n.links = links
		if err != nil {
			n.unreadable = "cannot read the project's git index for nested repositories: " + err.Error()
		}
	}
	if n.unreadable != "" {
		return nil, n.unreadable
	}
	if len(n.links) == 0 {
		return nil, ""
	}
	return gitnest.Changed(n.project, n.links, n.since), ""
}
