package gate

import (
	"encoding/json"
	"time"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/digest"
	"github.com/piagent/piagent/internal/secret"
)

// Consent is what approving s records, the one definition of it (approve,
// and add's write of a repository server, record this): the digest of
// the repository-owned fragment, each pinned file's digest (a missing file
// is not recorded), the fragment as the person saw it (secrets masked) for
// the next change's diff, and when.
func (s *Server) Consent(at time.Time) approval.Decision {
	files := map[string]string{}
	for _, p := range s.Pinned {
		if p.Digest != "" {
			files[p.Path] = p.Digest
		}
	}
	owned, err := json.Marshal(s.Owned())
	if err != nil {
		owned = nil
	}
	return approval.Decision{Decision: approval.Approved, Digest: s.Digest, DecidedAt: decidedAt(at), Files: files, Definition: owned}
}

// Refusal is what rejecting s records: the fragment's digest, and when.
func (s *Server) Refusal(at time.Time) approval.Decision {
	return approval.Decision{Decision: approval.Rejected, Digest: s.Digest, DecidedAt: decidedAt(at)}
}

func decidedAt(at time.Time) string { return at.UTC().Format(time.RFC3339) }

// ApprovalDigest is what a person sees and approves: the repository-owned
// fragment's digest and every pinned file's digest, as one digest. `approve
// --digest` records consent only while it still holds.
func (s *Server) ApprovalDigest() string {
	files := map[string]any{}
	for _, p := range s.Pinned {
		files[p.Path] = p.Digest
	}
	d, err := digest.Of(map[string]any{"definition": s.Digest, "files": files})
	if err != nil {
		return ""
	}
	return d
}

// Owned is the repository-owned fragment (one entry, or {source, entry}
// parts) as the repository wrote it, secrets masked: what consent covers,
// as get and approve show it and the store keeps it.
func (s *Server) Owned() any {
	switch x := s.Fragment.(type) {
	case map[string]any:
		m, _ := secret.MaskWritten(x)
		return m
	case []any:
		out := make([]any, len(x))
		for i, p := range x {
			part, _ := p.(map[string]any)
			e, _ := part["entry"].(map[string]any)
			m, _ := secret.MaskWritten(e)
			out[i] = map[string]any{"source": part["source"], "entry": m}
		}
		return out
	}
	return s.Fragment
}
